import type { FieldProblem } from '../../lib/errors';

type Schema = Record<string, unknown>;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A key as a client may have meant it: case, `_` and `-` aside (`deliveryAttempts`, `Delivery-Attempts`). */
const normalized = (key: string): string => key.toLowerCase().replace(/[_-]/g, '');

/**
 * Whether `key` is `field` with one slip of the kind typing makes: two
 * neighbouring letters swapped (`langauge`), a letter left out anywhere but
 * first (`refrence`, `schedule` for `scheduled`), or one typed twice or
 * stray inside it (`scheduuled`), but not a letter added at either end
 * (`emails`, `references`, `reference2` are names of their own), nor a
 * digit, nor one letter changed for another (`consent`, `context` are words
 * of their own).
 */
function slipOf(key: string, field: string): boolean {
  let i = 0;
  while (i < key.length && i < field.length && key[i] === field[i]) i++;
  if (key.length === field.length) return i < key.length - 1 && key[i] === field[i + 1] && key[i + 1] === field[i] && key.slice(i + 2) === field.slice(i + 2);
  // A digit left out or added makes another of a numbered series (`param` beside `param1`).
  if (key.length === field.length - 1) return i > 0 && !/\d/.test(field[i]!) && key.slice(i) === field.slice(i + 1);
  if (key.length === field.length + 1) return i > 0 && i < key.length - 1 && !/\d/.test(key[i]!) && key.slice(i + 1) === field.slice(i);
  return false;
}

/** The known fields of a schema's properties object, one array per object (so answers to them are kept). */
const knownOf = new WeakMap<object, string[]>();
function knownFields(properties: Record<string, unknown>): string[] {
  let known = knownOf.get(properties);
  if (!known) knownOf.set(properties, (known = Object.keys(properties)));
  return known;
}

/** Unknown keys of one object looked at for a slip. */
const MAX_UNKNOWN_LOOKED_AT = 100;

/** Answers per set of known fields (the schema's properties object), for the keys that came before: a streamed import's rows repeat theirs. */
const answers = new WeakMap<readonly string[], Map<string, string | undefined>>();
const MAX_ANSWERS = 1000;

/** The known field `key` was most likely meant as, if it is so close to one that it is a slip rather than a field of its own. */
export function meantField(key: string, known: readonly string[]): string | undefined {
  let cache = answers.get(known);
  if (!cache) answers.set(known, (cache = new Map()));
  if (cache.has(key)) return cache.get(key);
  const k = normalized(key);
  const words = k.replace(/\d+/g, '#');
  let meant: string | undefined;
  for (const field of known) {
    const f = normalized(field);
    if (k === f) {
      meant = field;
      break;
    }
    // Short names have too many neighbours; another of a numbered series (`param7` beside `param6`) is a field of its own.
    if (f.length < 6 || (/\d/.test(f) && /\d/.test(k) && f.replace(/\d+/g, '#') === words)) continue;
    if (meant === undefined && slipOf(k, f)) meant = field;
  }
  if (cache.size < MAX_ANSWERS) cache.set(key, meant);
  return meant;
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
  const known = knownFields(properties);
  const problems: FieldProblem[] = [];
  let unknown = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (Object.hasOwn(properties, key)) {
      problems.push(...nearMissFields(defs, properties[key], value[key], path, [...at, key]));
      continue;
    }
    // A closed object reports every unknown field itself.
    if (s.additionalProperties === false) continue;
    // A client's slips are among its first few keys; an object of thousands unknown is no slip, and looking at each costs.
    if (++unknown > MAX_UNKNOWN_LOOKED_AT) continue;
    const meant = meantField(key, known);
    if (meant !== undefined) problems.push({ field: path([...at, key]), description: `is not a known field; did you mean ${meant}?` });
  }
  return problems;
}
