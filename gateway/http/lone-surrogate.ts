import { HermodError } from '../../lib/errors';

// Valid UTF-8 never decodes to a lone surrogate, so only a \uD800-\uDFFF escape can make one.
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE = /\p{Cs}/u;

/** Whether JSON text could hold a lone surrogate; false lets the common case skip the walk. */
export function mayHaveLoneSurrogate(jsonText: string): boolean {
  return SURROGATE_ESCAPE.test(jsonText);
}

/**
 * Refuses a parsed JSON value with a string (or key) holding half of a
 * surrogate pair, such as `"\ud83d"` without its partner: no handset
 * alphabet (GSM 03.38, UCS-2, UTF-8 for e-mail) can carry it, and sending it
 * would turn it into U+FFFD. `path` names the value, e.g. `members[3]`.
 */
export function checkNoLoneSurrogates(value: unknown, path: string): void {
  const found = find(value, path);
  if (found === undefined) return;
  const field = found.path || '(body)';
  const description = `has a lone surrogate \\u${found.unit.toString(16)}: text must be whole Unicode characters (an emoji's two halves together)`;
  throw new HermodError('invalid_json', `${field}: ${description}`, { fields: [{ field: found.path, description }] });
}

/** A value still to look at: `step` is how its parent reaches it (`[3]`, `name`), read only to name a hit. */
interface Pending {
  value: unknown;
  parent: Pending | undefined;
  step: string;
}

// Deeper than this, a hit's name keeps its first and last steps, with `…` between.
const NAMED_STEPS = 16;

/**
 * Depth first in document order (each key before its value), with a stack of
 * its own: JSON nested hundreds of thousands deep overflows a recursive walk.
 */
function find(value: unknown, path: string): { path: string; unit: number } | undefined {
  const stack: Pending[] = [{ value, parent: undefined, step: path }];
  for (let at = stack.pop(); at !== undefined; at = stack.pop()) {
    const v = at.value;
    if (typeof v === 'string') {
      const m = LONE.exec(v);
      if (m) return { path: nameOf(at), unit: m[0].charCodeAt(0) };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], parent: at, step: `[${i}]` });
    } else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, inner] = entries[i]!;
        const named: Pending = { value: inner, parent: at, step: key };
        stack.push(named, { value: key, parent: at, step: key });
      }
    }
  }
  return undefined;
}

function nameOf(hit: Pending): string {
  const steps: string[] = [];
  for (let at: Pending | undefined = hit; at !== undefined; at = at.parent) steps.push(at.step);
  steps.reverse();
  const shown = steps.length > 2 * NAMED_STEPS ? [...steps.slice(0, NAMED_STEPS), '…', ...steps.slice(-NAMED_STEPS)] : steps;
  let path = '';
  for (const step of shown) path = !path || step.startsWith('[') ? path + step : `${path}.${step}`;
  return path;
}
