import { randomUUID, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import zlib from 'node:zlib';
import { StandinSqlError } from './clickhouse-standin-sql';

/** One HTTP request to the ClickHouse stand-in, read the way the server's HTTP handler reads it. */
export interface StandinRequest {
  res: http.ServerResponse;
  /** The statement text: the `query` parameter and a newline, then the body (when there is one). */
  text: string;
  /** The decompressed body. */
  body: Buffer;
  /** Bytes of `text` that come before the body. */
  prefixBytes: number;
  /** `param_*` values as sent (Escaped text), by name without the prefix. */
  params: Map<string, string>;
  database: string;
  queryId: string;
  sessionId?: string;
  sessionTimeoutSeconds: number;
  defaultFormat: string;
  /** GET requests may only read, as on a server. */
  readonly: boolean;
  /** Codec for the response body, when the client asked for compression. */
  responseEncoding?: 'gzip' | 'deflate' | 'br';
}

export class StandinRequestError extends StandinSqlError {}

/** URL parameters the HTTP layer itself consumes; anything else would be a query setting. */
const HTTP_PARAMS = new Set([
  'query',
  'database',
  'query_id',
  'session_id',
  'session_timeout',
  'session_check',
  'default_format',
  'user',
  'password',
  'quota_key',
  'enable_http_compression',
  'http_zlib_compression_level',
  'wait_end_of_query',
  'send_progress_in_http_headers',
  'http_headers_progress_interval_ms',
  'buffer_size',
  'role',
]);

/**
 * Reads, authenticates and decompresses a request. Answers `/ping` and a bare
 * `GET /` itself ("Ok.\n"), returning undefined for them.
 */
export async function readStandinRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  users: Record<string, string>,
): Promise<StandinRequest | undefined> {
  const url = new URL(req.url ?? '/', 'http://standin');
  const raw = await readBody(req);
  if (url.pathname === '/ping' || (req.method === 'GET' && url.pathname === '/' && url.search === '')) {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=UTF-8' }).end('Ok.\n');
    return undefined;
  }
  if (url.pathname !== '/') throw new StandinRequestError(0, 'UNKNOWN', `There is no handle ${url.pathname}`);
  authenticate(req, url, users);
  const body = decompress(raw, req.headers['content-encoding']);

  let query = url.searchParams.get('query') ?? '';
  const params = new Map<string, string>();
  for (const [key, value] of url.searchParams) {
    if (key.startsWith('param_')) params.set(key.slice('param_'.length), value);
    else if (!HTTP_PARAMS.has(key)) throw new StandinRequestError(115, 'UNKNOWN_SETTING', `the ClickHouse HTTP stand-in applies no query settings; got ${key}`);
  }
  if (url.searchParams.get('decompress') === '1' || url.searchParams.get('compress') === '1') {
    throw new StandinRequestError(48, 'NOT_IMPLEMENTED', 'the ClickHouse HTTP stand-in does not speak ClickHouse block compression (compress/decompress)');
  }

  let text: string;
  let prefixBytes = 0;
  let data = req.method === 'GET' ? Buffer.alloc(0) : body;
  const multipart = /^multipart\/form-data;\s*boundary=(.+)$/i.exec(req.headers['content-type'] ?? '');
  if (multipart) {
    // Parameters too long for a URL come as form parts, with the query.
    for (const [name, value] of parseMultipart(data, multipart[1]!.replace(/^"|"$/g, ''))) {
      if (name === 'query') query = value;
      else if (name.startsWith('param_')) params.set(name.slice('param_'.length), value);
    }
    data = Buffer.alloc(0);
  }
  if (query !== '' && data.length > 0) {
    const prefix = `${query}\n`;
    prefixBytes = Buffer.byteLength(prefix);
    text = prefix + data.toString('utf8');
  } else {
    text = query !== '' ? query : data.toString('utf8');
  }
  if (text.trim() === '') throw new StandinRequestError(62, 'SYNTAX_ERROR', 'Syntax error: Empty query');

  const sessionTimeout = Number(url.searchParams.get('session_timeout') ?? '60');
  return {
    res,
    text,
    body: data,
    prefixBytes,
    params,
    database: url.searchParams.get('database') || 'default',
    queryId: url.searchParams.get('query_id') || randomUUID(),
    ...(url.searchParams.get('session_id') ? { sessionId: url.searchParams.get('session_id')! } : {}),
    sessionTimeoutSeconds: Number.isFinite(sessionTimeout) && sessionTimeout > 0 ? sessionTimeout : 60,
    defaultFormat: url.searchParams.get('default_format') || 'TabSeparated',
    readonly: req.method === 'GET',
    ...responseEncoding(url, req.headers['accept-encoding']),
  };
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Basic auth, X-ClickHouse-User/Key headers, or user/password parameters, as the server accepts them. */
function authenticate(req: http.IncomingMessage, url: URL, users: Record<string, string>): void {
  let user = url.searchParams.get('user') ?? undefined;
  let password = url.searchParams.get('password') ?? '';
  const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '');
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    user = colon < 0 ? decoded : decoded.slice(0, colon);
    password = colon < 0 ? '' : decoded.slice(colon + 1);
  } else if (typeof req.headers['x-clickhouse-user'] === 'string') {
    user = req.headers['x-clickhouse-user'];
    password = typeof req.headers['x-clickhouse-key'] === 'string' ? req.headers['x-clickhouse-key'] : '';
  }
  user ??= 'default';
  const expected = users[user];
  const same =
    expected !== undefined && Buffer.byteLength(expected) === Buffer.byteLength(password) && timingSafeEqual(Buffer.from(expected), Buffer.from(password));
  if (!same) {
    throw new StandinRequestError(516, 'AUTHENTICATION_FAILED', `${user}: Authentication failed: password is incorrect, or there is no user with such name.`);
  }
}

function decompress(body: Buffer, encoding: string | undefined): Buffer {
  switch (encoding?.toLowerCase()) {
    case undefined:
    case '':
    case 'identity':
      return body;
    case 'gzip':
      return zlib.gunzipSync(body);
    case 'deflate':
      return zlib.inflateSync(body);
    case 'br':
      return zlib.brotliDecompressSync(body);
    default:
      throw new StandinRequestError(48, 'NOT_IMPLEMENTED', `the ClickHouse HTTP stand-in cannot decode Content-Encoding ${encoding}`);
  }
}

/** The server compresses a response only when asked twice: enable_http_compression=1 and Accept-Encoding. */
function responseEncoding(url: URL, accept: string | undefined): { responseEncoding?: 'gzip' | 'deflate' | 'br' } {
  if (url.searchParams.get('enable_http_compression') !== '1' || !accept) return {};
  const offered = accept.split(',').map((e) => e.trim().split(';')[0]!.toLowerCase());
  const codec = (['gzip', 'br', 'deflate'] as const).find((c) => offered.includes(c));
  return codec ? { responseEncoding: codec } : {};
}

/** name → value of a multipart/form-data body of plain text parts. */
export function parseMultipart(body: Buffer, boundary: string): [string, string][] {
  const parts: [string, string][] = [];
  for (const chunk of body.toString('utf8').split(`--${boundary}`)) {
    const headerEnd = chunk.indexOf('\r\n\r\n');
    if (headerEnd < 0) continue;
    const name = /name="([^"]*)"/.exec(chunk.slice(0, headerEnd))?.[1];
    if (name === undefined) continue;
    parts.push([name, chunk.slice(headerEnd + 4).replace(/\r\n$/, '')]);
  }
  return parts;
}
