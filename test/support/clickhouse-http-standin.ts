import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createStandinEngine } from './clickhouse-standin-engine';
import { readStandinRequest, type StandinRequest } from './clickhouse-standin-request';
import { sendStandinError, sendStandinResult } from './clickhouse-standin-response';
import {
  isTextType,
  parseInsertWithData,
  parseTextArrayParam,
  placeholderTypes,
  singleStatement,
  StandinSqlError,
  textArrayElementType,
  trailingFormat,
  unescapeParam,
} from './clickhouse-standin-sql';

/**
 * A STAND-IN FOR A CLICKHOUSE SERVER'S HTTP TRANSPORT, for tests only.
 *
 * No ClickHouse server can run on the machines hermod is tested on, so this
 * speaks the part of ClickHouse's HTTP interface that @clickhouse/client uses
 * and executes every statement in chDB, which is the ClickHouse engine itself
 * in-process. What is ClickHouse's here is the SQL, the types, the formats and
 * the error codes and texts (all from chDB); what is this file's is only the
 * HTTP layer: the query from `query=` and/or the body, `param_*` values bound
 * to `{name:Type}` placeholders, `database`, `query_id`, `session_id`, basic
 * and X-ClickHouse-User/Key auth, gzip/deflate/br request and response
 * compression, the X-ClickHouse-* response headers, and errors as non-2xx
 * responses with `Code: N. DB::Exception: ...` text and
 * X-ClickHouse-Exception-Code.
 *
 * Left out, and refused with an error rather than ignored: query-level
 * settings in the URL (except the HTTP ones), multi-statements (as a server),
 * ClickHouse's own `compress`/`decompress` block format, and backslash escapes
 * in non-text parameter values other than arrays of texts.
 */
export interface ClickHouseHttpStandin {
  /** e.g. http://default:@127.0.0.1:40123 */
  readonly url: string;
  readonly port: number;
  /** Every request's query as received, in order, for tests that check what went over the wire. */
  readonly queries: string[];
  close(): Promise<void>;
}

export interface ClickHouseHttpStandinOptions {
  /** Users and passwords; default one user `default` with an empty password. */
  users?: Record<string, string>;
  /** Concurrent queries (chDB sessions); default 4. */
  concurrency?: number;
}

export async function startClickHouseHttpStandin(options: ClickHouseHttpStandinOptions = {}): Promise<ClickHouseHttpStandin> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-clickhouse-standin-'));
  const engine = createStandinEngine(dataDir, options.concurrency ?? 4);
  const users = options.users ?? { default: '' };
  const queries: string[] = [];
  const running = new Set<string>();

  const execute = async (request: StandinRequest): Promise<void> => {
    const insert = parseInsertWithData(request.text);
    const sql = insert ? insert.head : singleStatement(request.text);
    queries.push(sql);
    if (request.readonly && !/^\s*(?:SELECT|WITH|SHOW|DESC|DESCRIBE|EXISTS|EXPLAIN)\b/i.test(sql)) {
      throw new StandinSqlError(
        164,
        'READONLY',
        'Cannot execute query in readonly mode. For queries over HTTP, method GET implies readonly. You should use method POST for modifying queries',
      );
    }
    if (running.has(request.queryId)) {
      throw new StandinSqlError(216, 'QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING', `Query with id = ${request.queryId} is already running.`);
    }
    running.add(request.queryId);
    try {
      if (request.database !== 'default' && !(await engine.databaseExists(request.database))) {
        throw new StandinSqlError(81, 'UNKNOWN_DATABASE', `Database ${request.database} does not exist`);
      }
      await engine.withSession(request.sessionId, request.sessionTimeoutSeconds, async (session) => {
        await session.use(request.database);
        if (insert) {
          // The data is usually the whole body (the statement came in `query=`); it may also follow the statement inside either.
          const data =
            insert.dataOffset >= request.prefixBytes && request.body.length > 0
              ? request.body.subarray(insert.dataOffset - request.prefixBytes)
              : Buffer.from(request.text, 'utf8').subarray(insert.dataOffset);
          if (insert.plain && RAW_FORMATS.has(insert.format)) {
            const summary = await session.insertRaw(insert.table, insert.columns, data, insert.format);
            sendStandinResult(request, {
              format: 'TabSeparated',
              body: Buffer.alloc(0),
              summary: { written_rows: summary.rowsWritten, written_bytes: summary.bytesWritten },
            });
          } else {
            await session.query(`${insert.head}\n${data.toString('utf8')}`, undefined, 'TabSeparated');
            sendStandinResult(request, { format: 'TabSeparated', body: Buffer.alloc(0), summary: {} });
          }
          return;
        }
        const format = trailingFormat(sql) ?? request.defaultFormat;
        const result = await session.query(sql, bindParams(sql, request.params), format);
        sendStandinResult(request, {
          format,
          body: Buffer.from(result.bytes()),
          summary: { read_rows: result.rowsRead, read_bytes: result.bytesRead, elapsed_ns: Math.round(result.elapsed * 1e9) },
        });
      });
    } finally {
      running.delete(request.queryId);
    }
  };

  // A server takes a URI of up to http_max_uri_size (1 MiB by default): parameters travel in it.
  const server = http.createServer({ maxHeaderSize: 1024 * 1024 }, (req, res) => {
    void (async () => {
      let request: StandinRequest | undefined;
      try {
        request = await readStandinRequest(req, res, users);
        if (request) await execute(request);
      } catch (err) {
        sendStandinError(res, request?.queryId ?? randomUUID(), err);
      }
    })();
  });
  // As a server's keep_alive_timeout: the client reads it from the Keep-Alive header.
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    queries,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await engine.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** chDB's raw insert formats: the payload goes to the engine's parser as bytes. */
const RAW_FORMATS = new Set(['JSONEachRow', 'JSONCompactEachRow', 'CSV', 'CSVWithNames', 'TSV', 'TabSeparated', 'TSVWithNames', 'TabSeparatedWithNames']);

/**
 * The wire values of `param_*` as chDB binds them. chDB escapes a string
 * itself before the engine parses it, so a value of a text type is decoded
 * first (the engine then reads the same string the server would); other
 * values pass as written, unless they hold escapes this cannot carry over.
 */
function bindParams(sql: string, params: Map<string, string>): Record<string, unknown> {
  const types = placeholderTypes(sql);
  const bound: Record<string, unknown> = {};
  for (const [name, type] of types) {
    const value = params.get(name);
    if (value === undefined) throw new StandinSqlError(456, 'UNKNOWN_QUERY_PARAMETER', `Substitution \`${name}\` is not set`);
    if (value === '\\N') bound[name] = null;
    else if (isTextType(type)) bound[name] = unescapeParam(value);
    else if (textArrayElementType(type)) bound[name] = parseTextArrayParam(value);
    else if (value.includes('\\'))
      throw new StandinSqlError(48, 'NOT_IMPLEMENTED', `the ClickHouse HTTP stand-in cannot bind backslash escapes in a ${type} parameter (${name})`);
    else bound[name] = value;
  }
  return bound;
}
