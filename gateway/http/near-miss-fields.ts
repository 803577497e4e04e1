import type { FieldProblem } from '../../lib/errors';

type Schema = Record<string, unknown>;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A key as a client may have meant it: case, `_` and `-` aside (`deliveryAttempts`, `Delivery-Attempts`). */
const normalized = (key: string): string => key.toLowerCase().replace(/[_-]/g, '');

/** Edits (insert, delete, substitute, swap two neighbours) between two short strings. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The known field `key` was most likely meant as, if it is close enough to one to be a slip rather than a field of its own. */
export function meantField(key: string, known: readonly string[]): string | undefined {
  const k = normalized(key);
  if (k.length < 4) return undefined;
  const words = k.replace(/\d+/g, '#');
  let best: { field: string; distance: number } | undefined;
  for (const field of known) {
    const f = normalized(field);
    if (f.length < 4) continue;
    // Another of a numbered series (`param7` beside `param1`..`param6`) is a field of its own, not a slip.
    if (f !== k && /\d/.test(f) && /\d/.test(k) && f.replace(/\d+/g, '#') === words) continue;
    const distance = k === f ? 0 : Math.abs(k.length - f.length) > 2 ? 3 : editDistance(k, f);
    if (distance <= (f.length >= 8 ? 2 : 1) && (!best || distance < best.distance)) best = { field, distance };
  }
  return best?.field;
}

/**
 * Fields of a request that its schema does not know, where objects are open
 * (unknown fields ignored), but that are so close to a known one of the same
 * object (`deliveryAttempts`, `refrence`, `schedule` for `scheduled`) that the
 * client meant it: ignored, the request would do something else than asked (a
 * message sent now, not at its time; on another channel) without a word.
 * Returns each as a problem at its path, naming the field meant.
 */
export function nearMissFields(
  defs: Record<string, unknown>,
  schema: unknown,
  value: unknown,
  path: (parts: readonly (string | number)[]) => string,
  at: (string | number)[] = [],
): FieldProblem[] {
  let s = schema as Schema | undefined;
  for (let hops = 0; isObject(s) && typeof s.$ref === 'string' && hops < 10; hops++) s = defs[s.$ref.replace('#/$defs/', '')] as Schema | undefined;
  if (!isObject(s)) return [];
  if (Array.isArray(value)) return isObject(s.items) ? value.flatMap((item, i) => nearMissFields(defs, s.items, item, path, [...at, i])) : [];
  if (!isObject(value) || !isObject(s.properties)) return [];
  const properties = s.properties;
  const known = Object.keys(properties);
  const problems: FieldProblem[] = [];
  for (const [key, inner] of Object.entries(value)) {
    if (Object.hasOwn(properties, key)) {
      problems.push(...nearMissFields(defs, properties[key], inner, path, [...at, key]));
      continue;
    }
    // A closed object reports every unknown field itself.
    if (s.additionalProperties === false) continue;
    const meant = meantField(key, known);
    if (meant !== undefined) problems.push({ field: path([...at, key]), description: `is not a known field; did you mean ${meant}?` });
  }
  return problems;
}
