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

function find(value: unknown, path: string): { path: string; unit: number } | undefined {
  if (typeof value === 'string') {
    const m = LONE.exec(value);
    return m ? { path, unit: m[0].charCodeAt(0) } : undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = find(value[i], `${path}[${i}]`);
      if (hit) return hit;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, v] of Object.entries(value)) {
      const named = path ? `${path}.${key}` : key;
      const inKey = find(key, named);
      if (inKey) return inKey;
      const hit = find(v, named);
      if (hit) return hit;
    }
  }
  return undefined;
}
