import type http from 'node:http';
import zlib from 'node:zlib';
import type { StandinRequest } from './clickhouse-standin-request';
import { StandinSqlError } from './clickhouse-standin-sql';

export interface StandinResult {
  format: string;
  body: Buffer;
  /** Counters for X-ClickHouse-Summary; missing ones read 0. */
  summary: Partial<Record<'read_rows' | 'read_bytes' | 'written_rows' | 'written_bytes' | 'elapsed_ns', number>>;
}

/** A successful answer with the headers a server sends (the client reads X-ClickHouse-Summary). */
export function sendStandinResult(request: StandinRequest, result: StandinResult): void {
  const summary = {
    read_rows: 0,
    read_bytes: 0,
    written_rows: 0,
    written_bytes: 0,
    total_rows_to_read: 0,
    result_rows: 0,
    result_bytes: 0,
    elapsed_ns: 0,
    ...result.summary,
  };
  const headers: http.OutgoingHttpHeaders = {
    'Content-Type': `${contentType(result.format)}; charset=UTF-8`,
    'X-ClickHouse-Server-Display-Name': 'clickhouse-http-standin',
    'X-ClickHouse-Query-Id': request.queryId,
    'X-ClickHouse-Format': result.format,
    'X-ClickHouse-Timezone': 'UTC',
    // The server quotes every counter in the summary.
    'X-ClickHouse-Summary': JSON.stringify(Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, String(v)]))),
    'Keep-Alive': 'timeout=10',
  };
  let body = result.body;
  if (request.responseEncoding) {
    body = compress(body, request.responseEncoding);
    headers['Content-Encoding'] = request.responseEncoding;
  }
  request.res.writeHead(200, headers).end(body);
}

/** An error as the server reports one: `Code: N. DB::Exception: ... (NAME)` and X-ClickHouse-Exception-Code. */
export function sendStandinError(res: http.ServerResponse, queryId: string, err: unknown): void {
  const { code, text } = describe(err);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res
    .writeHead(httpStatus(code), {
      'Content-Type': 'text/plain; charset=UTF-8',
      'X-ClickHouse-Server-Display-Name': 'clickhouse-http-standin',
      'X-ClickHouse-Query-Id': queryId,
      'X-ClickHouse-Exception-Code': String(code),
      'Keep-Alive': 'timeout=10',
    })
    .end(`${text}\n`);
}

function describe(err: unknown): { code: number; text: string } {
  if (err instanceof StandinSqlError)
    return { code: err.code, text: `Code: ${err.code}. DB::Exception: ${err.message.replace(/\.$/, '')}. (${err.type}) (clickhouse-http-standin)` };
  // chDB's errors already carry the engine's own text and code.
  const message = err instanceof Error ? err.message : String(err);
  const code = typeof (err as { clickhouseCode?: unknown })?.clickhouseCode === 'number' ? (err as { clickhouseCode: number }).clickhouseCode : 1001;
  const text = /^Code: \d+\. DB::Exception:/.test(message) ? message.trim() : `Code: ${code}. DB::Exception: ${message} (STD_EXCEPTION)`;
  return { code, text };
}

/** The statuses a server gives the errors the stand-in meets most; everything else is 500. */
function httpStatus(code: number): number {
  switch (code) {
    case 516: // AUTHENTICATION_FAILED
      return 403;
    case 60: // UNKNOWN_TABLE
    case 81: // UNKNOWN_DATABASE
      return 404;
    default:
      return 500;
  }
}

function contentType(format: string): string {
  if (/^JSON/i.test(format)) return 'application/json';
  if (/^(TabSeparated|TSV)/i.test(format)) return 'text/tab-separated-values';
  if (/^CSV/i.test(format)) return 'text/csv';
  return 'text/plain';
}

function compress(body: Buffer, codec: 'gzip' | 'deflate' | 'br'): Buffer {
  if (codec === 'gzip') return zlib.gzipSync(body);
  if (codec === 'deflate') return zlib.deflateSync(body);
  return zlib.brotliCompressSync(body);
}
