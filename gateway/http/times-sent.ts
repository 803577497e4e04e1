/**
 * How many times a request carries the header `name` (lower case), from its
 * raw lines: Node keeps the first of some repeated headers and joins others
 * with ", ", so only the raw lines tell.
 */
export function timesSent(rawHeaders: readonly string[], name: string): number {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.length === name.length && rawHeaders[i]!.toLowerCase() === name) seen++;
  return seen;
}
