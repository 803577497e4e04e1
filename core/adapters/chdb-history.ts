import fs from 'node:fs';
import path from 'node:path';
import { Session, drainPending, type ChdbQueryStream, type StreamChunk } from 'chdb';
import type { EncodedHistory } from '../history/encoded-history';
import { createSqlHistory, type HistoryEngine, type SqlHistoryOptions } from '../history/sql-history';
import { parseJsonCompactEachRow, parseJsonEachRow } from '../history/rows';

interface ChdbHistoryOptions extends SqlHistoryOptions {
  /** The database lives in `<dataDir>/history`. */
  dataDir: string;
  /** The engine's memory limit, max_server_memory_usage (default 512 MiB; HERMOD_CHDB_MAX_MEMORY). */
  maxMemoryBytes?: number;
  /**
   * Size of the engine's mark and primary-index caches (default 64 MiB each;
   * HERMOD_CHDB_CACHE_SIZE); the smaller caches get a quarter of it each, and
   * the uncompressed-block cache is off.
   */
  cacheBytes?: number;
}

const MiB = 1024 * 1024;
const DEFAULT_MAX_MEMORY = 512 * MiB;
const DEFAULT_CACHE = 64 * MiB;

/**
 * The engine runs inside core, beside the service: ClickHouse's defaults
 * (a memory limit of 90% of RAM, 5 GiB mark and index caches) are sized for a
 * server of its own. These are server settings, so they are given when the
 * engine starts (`clickhouse local` arguments), not per query.
 */
function engineArgs(options: ChdbHistoryOptions): string[] {
  const cache = Math.max(0, Math.trunc(options.cacheBytes ?? DEFAULT_CACHE));
  const small = Math.trunc(cache / 4);
  const settings: Record<string, number> = {
    max_server_memory_usage: Math.max(64 * MiB, Math.trunc(options.maxMemoryBytes ?? DEFAULT_MAX_MEMORY)),
    mark_cache_size: cache,
    primary_index_cache_size: cache,
    uncompressed_cache_size: 0,
    index_mark_cache_size: small,
    index_uncompressed_cache_size: 0,
    skipping_index_cache_size: small,
    vector_similarity_index_cache_size: small,
    query_condition_cache_size: small,
    compiled_expression_cache_size: small,
  };
  return Object.entries(settings).map(([name, value]) => `--${name}=${value}`);
}

const JSON_EACH_ROW = { format: 'JSONEachRow' } as const;

/**
 * History on an embedded chDB database: one session for the life of the
 * process (chDB binds one data directory per process). Each batch is one
 * INSERT per table, so MergeTree parts grow with batches, not rows.
 *
 * Long reads (the campaign report) stream on a session of their own at the
 * same path, one per read: a session runs one stream at a time, and the
 * journal's inserts must not wait behind a report being sent.
 */
export async function createChdbHistory(options: ChdbHistoryOptions): Promise<EncodedHistory> {
  const dbPath = path.join(options.dataDir, 'history');
  fs.mkdirSync(dbPath, { recursive: true });
  const args = engineArgs(options);
  const session = new Session(dbPath, { connectionArgs: args });
  const streams = new Map<ChdbQueryStream, Session>();
  /** A long read on a session of its own, block by block; cancelled when the consumer stops. */
  async function* blocks(sql: string, params: Record<string, unknown>, format: string): AsyncGenerator<StreamChunk> {
    const reader = new Session(dbPath, { connectionArgs: args });
    let result: ChdbQueryStream | undefined;
    try {
      result = reader.queryStreamBind(sql, params, { format });
      streams.set(result, reader);
      yield* result;
    } finally {
      if (result) {
        result.cancel();
        streams.delete(result);
      }
      reader.close();
    }
  }
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
    async *stream(sql, params) {
      for await (const block of blocks(sql, params, 'JSONCompactEachRow')) yield parseJsonCompactEachRow(block.text());
    },
    async *streamBytes(sql, params) {
      // The SQL's own FORMAT clause decides the output over the one named here.
      for await (const block of blocks(sql, params, 'TabSeparated')) yield block.raw();
    },
    async insert(table, columns, rows) {
      await session.insert({ table, columns, values: rows, format: 'JSONEachRow' });
    },
    async close() {
      // A reader left open by a consumer that stopped pulling: its stream is
      // cancelled before its connection goes.
      for (const [result, reader] of streams) {
        result.cancel();
        reader.close();
      }
      streams.clear();
      session.close();
      // The engine is released only once nothing native uses it any more;
      // after this another data directory may be opened in this process.
      await drainPending();
    },
  };
  return createSqlHistory(engine, options);
}
