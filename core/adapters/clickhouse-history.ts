import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createClient } from '@clickhouse/client';
import type { EncodedHistory } from '../history/encoded-history';
import { createSqlHistory, type HistoryEngine, type SqlHistoryOptions } from '../history/sql-history';

interface ClickHouseHistoryOptions extends SqlHistoryOptions {
  /** e.g. http://user:password@clickhouse:8123/hermod */
  url: string;
  /** Database to use (created if missing); default: the one in the URL, else `default`. */
  database?: string;
}

/**
 * History on a ClickHouse server through @clickhouse/client: the same schema
 * and the same parameterized SQL as the embedded chDB adapter, with the
 * parameters bound server-side.
 */
export async function createClickHouseHistory(options: ClickHouseHistoryOptions): Promise<EncodedHistory> {
  const { serverUrl, database } = splitDatabase(options.url, options.database);
  if (database !== 'default') {
    // Created through the default database: a request naming a missing one is refused.
    const admin = createClient({ url: serverUrl });
    try {
      await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdentifier(database)}` });
    } finally {
      await admin.close();
    }
  }
  const client = createClient({ url: serverUrl, database });
  const engine: HistoryEngine = {
    name: 'ClickHouse',
    async exec(sql) {
      await client.command({ query: sql });
    },
    async select(sql, params) {
      const result = await client.query({ query: sql, query_params: params, format: 'JSONEachRow' });
      return result.json<Record<string, unknown>>();
    },
    async command(sql, params) {
      await client.command({ query: sql, query_params: params });
    },
    async *stream(sql, params) {
      const result = await client.query({ query: sql, query_params: params, format: 'JSONCompactEachRow' });
      try {
        for await (const rows of result.stream<unknown[]>()) yield rows.map((row) => row.json());
      } finally {
        result.close();
      }
    },
    async *streamBytes(sql, params) {
      // exec: the response body as it comes, in the FORMAT the SQL names (query() would split it into lines).
      const { stream } = await client.exec({ query: sql, query_params: params });
      try {
        for await (const bytes of stream) yield bytes as Buffer;
      } finally {
        stream.destroy();
      }
    },
    async insert(table, columns, rows) {
      // The rows are JSONEachRow bytes already: sent as the body as they are.
      // (client.insert() JSON-encodes each object of a stream, so a Buffer in
      // it would go over the wire as {"type":"Buffer","data":[...]}.)
      const { stream } = await client.exec({
        query: `INSERT INTO ${table} (${columns.join(', ')}) FORMAT JSONEachRow`,
        values: Readable.from(rows, { objectMode: false }),
      });
      await finished(stream.resume());
    },
    close: () => client.close(),
  };
  return createSqlHistory(engine, options);
}

/** The server's URL without a database path, and the database to use: the option's, else the URL's, else `default`. */
function splitDatabase(url: string, database: string | undefined): { serverUrl: string; database: string } {
  const parsed = new URL(url);
  const fromPath = decodeURIComponent(parsed.pathname.replace(/^\/+|\/+$/g, ''));
  parsed.pathname = '/';
  return { serverUrl: parsed.toString(), database: database || fromPath || 'default' };
}

function quoteIdentifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  return name;
}
