import fs from 'node:fs';
import path from 'node:path';
import { Session, drainPending } from 'chdb';
import type { EncodedHistory } from '../history/encoded-history';
import { createSqlHistory, type HistoryEngine, type SqlHistoryOptions } from '../history/sql-history';
import { parseJsonEachRow } from '../history/rows';

interface ChdbHistoryOptions extends SqlHistoryOptions {
  /** The database lives in `<dataDir>/history`. */
  dataDir: string;
}

const JSON_EACH_ROW = { format: 'JSONEachRow' } as const;

/**
 * History on an embedded chDB database: one session for the life of the
 * process (chDB binds one data directory per process). Each batch is one
 * INSERT per table, so MergeTree parts grow with batches, not rows.
 */
export async function createChdbHistory(options: ChdbHistoryOptions): Promise<EncodedHistory> {
  const dbPath = path.join(options.dataDir, 'history');
  fs.mkdirSync(dbPath, { recursive: true });
  const session = new Session(dbPath);
  const engine: HistoryEngine = {
    name: 'chDB',
    async exec(sql) {
      await session.queryAsync(sql);
    },
    async select(sql, params) {
      return parseJsonEachRow((await session.queryBindAsync(sql, params, JSON_EACH_ROW)).text());
    },
    async command(sql, params) {
      await session.queryBindAsync(sql, params);
    },
    async insert(table, columns, rows) {
      await session.insert({ table, columns, values: rows, format: 'JSONEachRow' });
    },
    async close() {
      session.close();
      // The engine is released only once nothing native uses it any more;
      // after this another data directory may be opened in this process.
      await drainPending();
    },
  };
  return createSqlHistory(engine, options);
}
