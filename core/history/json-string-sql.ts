/**
 * ClickHouse SQL that turns a String expression into its JSON text exactly as
 * JavaScript's JSON.stringify writes it, so text the engine formats reads
 * byte for byte like text the service used to format. ClickHouse's own
 * toJSONString differs: it writes \u001F rather than \u001f, escapes U+2028
 * and U+2029, and (by default) the forward slash.
 *
 * JSON.stringify escapes only the quote, the backslash and the characters
 * below U+0020 (and lone surrogates, which UTF-8 text cannot hold); each
 * replacement below is JSON.stringify's own escape of that character. The
 * backslash goes first, so no later replacement's backslash is doubled.
 */
const ESCAPED = ['\\', '"', ...Array.from({ length: 0x20 }, (_, c) => String.fromCharCode(c))];

/** A ClickHouse string literal of `text` (ASCII here: the escapes of JSON). */
export function sqlStringLiteral(text: string): string {
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

const search = (c: string): string => (c.charCodeAt(0) < 0x20 ? `char(${c.charCodeAt(0)})` : sqlStringLiteral(c));

/** Text that needs no escape is only put in quotes; the rest goes through one replaceAll per character JSON escapes. */
export function jsonStringSql(expr: string): string {
  let escaped = expr;
  for (const c of ESCAPED) escaped = `replaceAll(${escaped}, ${search(c)}, ${sqlStringLiteral(JSON.stringify(c).slice(1, -1))})`;
  return `concat('"', if(match(${expr}, '[\\\\x00-\\\\x1f"\\\\\\\\]'), ${escaped}, ${expr}), '"')`;
}
