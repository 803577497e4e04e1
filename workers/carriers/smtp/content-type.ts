/** A MIME Content-Type header value: its type in lower case and its parameters (names lower-cased, quotes removed). */
export interface ContentType {
  value: string;
  params: Record<string, string>;
}

export function parseContentType(header: string): ContentType {
  const [type = '', ...rest] = header.split(';');
  const params: Record<string, string> = {};
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    params[p.slice(0, eq).trim().toLowerCase()] = p
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
  }
  return { value: type.trim().toLowerCase(), params };
}
