/**
 * Deepest nesting a request body may have. The deepest body any interface
 * takes is a few levels (an Intelligent Messaging message's template
 * parameters); 64 leaves room for what clients add and hermod ignores.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether JSON text nests objects and arrays deeper than `max`, read in one
 * pass without parsing it (brackets inside strings do not count). JSON.parse
 * of a megabyte of `[[[…` takes over a second of the thread that serves
 * every other client; this takes about a millisecond, so such a body is
 * refused before it is parsed.
 */
export function nestsDeeperThan(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote, stepping over escapes.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
