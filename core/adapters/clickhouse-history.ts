import { Readable } from 'node:stream';
import { createClient } from '@clickhouse/client';
import type { History } from '../ports/history';
import { createSqlHistory, type HistoryEngine, type SqlHistoryOptions } from '../history/sql-history';

export interface ClickHouseHistoryOptions extends SqlHistoryOptions {
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
export async function createClickHouseHistory(options: ClickHouseHistoryOptions): Promise<History> {
  if (options.database) {
    const admin = createClient({ url: options.url });
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdentifier(options.database)}` });
    await admin.close();
  }
  const client = createClient({ url: options.url, ...(options.database ? { database: options.database } : {}) });
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
    async insert(table, columns, rows) {
      await client.insert({ table, columns: columns as [string, ...string[]], values: Readable.from([rows]), format: 'JSONEachRow' });
    },
    close: () => client.close(),
  };
  return createSqlHistory(engine, options);
}

function quoteIdentifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  return name;
}
