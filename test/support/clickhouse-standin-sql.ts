/**
 * The little SQL reading the ClickHouse HTTP stand-in needs before it hands a
 * request to chDB: where one statement ends, whether it is an
 * `INSERT ... FORMAT x` with data after it, which output format it asks for,
 * and the types of its `{name:Type}` placeholders. chDB parses the SQL itself;
 * this only finds what the HTTP layer of a server decides on its own.
 */

/** A statement error the server reports with a ClickHouse code, e.g. 62 SYNTAX_ERROR. */
export class StandinSqlError extends Error {
  constructor(
    readonly code: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Index of the first `;` outside quotes and comments, or -1. The server runs
 * one statement per request and refuses more (chDB would run them all).
 */
export function firstTopLevelSemicolon(sql: string): number {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"' || c === '`') {
      i = skipQuoted(sql, i, c);
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === ';') {
      return i;
    } else {
      i++;
    }
  }
  return -1;
}

function skipQuoted(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === '\\') i += 2;
    else if (sql[i] === quote) {
      if (sql[i + 1] === quote)
        i += 2; // a doubled quote is an escaped one
      else return i + 1;
    } else i++;
  }
  return i;
}

/** The one statement of a request, without a trailing `;`; refuses a second one as the server does. */
export function singleStatement(sql: string): string {
  const semicolon = firstTopLevelSemicolon(sql);
  if (semicolon < 0) return sql;
  if (sql.slice(semicolon + 1).trim() !== '') {
    throw new StandinSqlError(62, 'SYNTAX_ERROR', 'Syntax error: Multi-statements are not allowed');
  }
  return sql.slice(0, semicolon);
}

export interface InsertWithData {
  /** As written: a plain or dotted name, or a quoted one. */
  table: string;
  /** Plain column names, or undefined when the statement lists none. */
  columns?: string[];
  format: string;
  /** Whether table and columns are plain identifiers chDB's raw insert accepts. */
  plain: boolean;
  /** The statement up to and including the format name. */
  head: string;
  /** Byte offset of the data in the request text. */
  dataOffset: number;
}

const IDENT = String.raw`(?:[A-Za-z_][A-Za-z0-9_]*|\x60(?:[^\x60\\]|\\.)+\x60|"(?:[^"\\]|\\.)+")`;
const INSERT_HEAD = new RegExp(
  String.raw`^\s*INSERT\s+INTO\s+(?:TABLE\s+)?(${IDENT}(?:\.${IDENT})?)\s*(?:\(([^()]*)\))?\s*FORMAT\s+([A-Za-z0-9_]+)[ \t]*(?:\r?\n)?`,
  'i',
);
const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?$/;

/**
 * `INSERT INTO t [(a, b)] FORMAT F` followed by its data, as the server reads
 * it from the `query` parameter and the body joined by a newline; else
 * undefined (a VALUES or SELECT insert is an ordinary statement).
 */
export function parseInsertWithData(text: string): InsertWithData | undefined {
  const m = INSERT_HEAD.exec(text.slice(0, 64 * 1024));
  if (!m) return undefined;
  const columns = m[2]
    ?.split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  const plain = PLAIN.test(m[1]!) && (columns ?? []).every((c) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(c));
  const head = m[0].trimEnd();
  return { table: m[1]!, ...(columns ? { columns } : {}), format: m[3]!, plain, head, dataOffset: Buffer.byteLength(m[0]) };
}

/** The `FORMAT x` a statement ends with, if any: it decides the response's format over `default_format`. */
export function trailingFormat(statement: string): string | undefined {
  return /\bFORMAT\s+([A-Za-z0-9_]+)\s*$/i.exec(statement)?.[1];
}

/** `{name:Type}` placeholders of a statement, name to type. */
export function placeholderTypes(statement: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const m of statement.matchAll(/\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}/g)) types.set(m[1]!, m[2]!);
  return types;
}

const ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', '0': '\0', a: '\x07', v: '\v', e: '\x1b' };

/**
 * A parameter value in the Escaped (TSV) text form the server parses `param_*`
 * values with, decoded to the string it stands for: `\t`, `\n`, `\\`, `\'`,
 * `\xHH` and the rest of ClickHouse's backslash escapes.
 */
export function unescapeParam(text: string): string {
  if (!text.includes('\\')) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== '\\' || i === text.length - 1) {
      out += c;
      continue;
    }
    const next = text[++i]!;
    if (next === 'x' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      out += String.fromCharCode(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      out += ESCAPES[next] ?? next;
    }
  }
  return out;
}

/** Placeholder types whose value is text, bound as the decoded string. */
export function isTextType(type: string): boolean {
  const inner = type.replace(/^(?:Nullable|LowCardinality)\((.*)\)$/, '$1').replace(/^(?:Nullable|LowCardinality)\((.*)\)$/, '$1');
  return /^(?:String|FixedString\(\d+\)|UUID|Enum(?:8|16)?\(.*\)|Date(?:32)?|DateTime(?:64)?(?:\(.*\))?|IPv[46])$/.test(inner);
}

/** `Array(T)` with T a text type (Nullable or not): the element type, else undefined. */
export function textArrayElementType(type: string): string | undefined {
  const m = /^Array\((.*)\)$/.exec(type);
  return m && isTextType(m[1]!) ? m[1] : undefined;
}

/**
 * An array of texts as a client writes it in a parameter (`['a','o\\'b',NULL]`),
 * decoded into its strings, so it binds as the array a server would read.
 */
export function parseTextArrayParam(text: string): (string | null)[] {
  const fail = (): never => {
    throw new StandinSqlError(26, 'CANNOT_PARSE_QUOTED_STRING', `cannot parse an array of strings from ${JSON.stringify(text.slice(0, 100))}`);
  };
  const t = text.trim();
  if (!t.startsWith('[') || !t.endsWith(']')) fail();
  const out: (string | null)[] = [];
  let i = 1;
  const skipSpaces = (): void => {
    while (t[i] === ' ') i++;
  };
  skipSpaces();
  if (t[i] === ']') return i === t.length - 1 ? out : fail();
  for (;;) {
    skipSpaces();
    if (t.startsWith('NULL', i)) {
      out.push(null);
      i += 4;
    } else {
      if (t[i] !== "'") fail();
      let j = i + 1;
      while (j < t.length && t[j] !== "'") j += t[j] === '\\' ? 2 : 1;
      if (j >= t.length) fail();
      out.push(unescapeParam(t.slice(i + 1, j)));
      i = j + 1;
    }
    skipSpaces();
    if (t[i] === ']' && i === t.length - 1) return out;
    if (t[i] !== ',') fail();
    i++;
  }
}
