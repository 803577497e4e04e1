/**
 * The first name an object of valid JSON text holds twice, or undefined. JSON.parse keeps the last of
 * them, so `{"destination":"+6421…1","destination":"+6421…2"}` would send to the second handset, the
 * first silently dropped; RFC 8259 asks names to be unique and I-JSON (RFC 7493) requires it. One pass
 * over the text, as json-depth.ts reads it: names are compared as JSON.parse reads them (`"a"` and
 * `"\u0061"` are one), so call this only on text JSON.parse took.
 */
export function firstDuplicateName(text: string): string | undefined {
  /** Each open object's names so far; undefined for an open array. */
  const open: (Set<string> | undefined)[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      let escaped = false;
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) {
          escaped = true;
          i++;
        } else if (s === 0x22) break;
      }
      const names = open[open.length - 1];
      if (!names) continue;
      // A string in an object is a name when a colon follows it.
      let j = i + 1;
      while (j < text.length && isSpace(text.charCodeAt(j))) j++;
      if (text.charCodeAt(j) !== 0x3a) continue;
      const name = escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : text.slice(start + 1, i);
      if (names.has(name)) return name;
      names.add(name);
    } else if (c === 0x7b) open.push(new Set());
    else if (c === 0x5b) open.push(undefined);
    else if (c === 0x7d || c === 0x5d) open.pop();
  }
  return undefined;
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
