/**
 * The values a request gives the header `name` (lower case), one a raw line,
 * each trimmed: Node keeps the first of some repeated headers and joins
 * others with ", ", so only the raw lines tell.
 */
export function valuesSent(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.length === name.length && rawHeaders[i]!.toLowerCase() === name) values.push(rawHeaders[i + 1]!.trim());
  }
  return values;
}
