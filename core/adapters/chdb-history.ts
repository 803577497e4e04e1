import fs from 'node:fs';
import path from 'node:path';
import { Session, drainPending } from 'chdb';
import type { ApplicationRecord, History, StoredMessage } from '../ports/history';
import { HermodError } from '../../lib/errors';
import { HISTORY_SCHEMA } from '../history/schema';
import {
  FIND_MESSAGE_ID_BY_CARRIER_ID,
  GET_APPLICATION_BY_API_KEY_HASH,
  GET_APPLICATION_BY_NAME,
  GET_MESSAGE,
  INSERTS,
  LIST_UNFINISHED,
  PING,
} from '../history/queries';
import {
  applicationRow,
  eventRow,
  jsonEachRow,
  messageRow,
  parseJsonEachRow,
  toApplication,
  toStoredMessage,
} from '../history/rows';

export interface ChdbHistoryOptions {
  /** The database lives in `<dataDir>/history`. */
  dataDir: string;
  /**
   * listUnfinished only looks at messages accepted within this window (default
   * 70 days), so recovery reads the recent monthly partitions and nothing older.
   */
  unfinishedWindowMs?: number;
  /** Clock for the recovery window (tests). */
  now?: () => number;
}

const DEFAULT_UNFINISHED_WINDOW_MS = 70 * 24 * 60 * 60 * 1000;
const JSON_EACH_ROW = { format: 'JSONEachRow' } as const;

/**
 * History on an embedded chDB database. One session for the life of the
 * process (chDB binds one data directory per process); the schema is applied
 * when it opens. Each batch is one INSERT per table, so the number of
 * MergeTree parts grows with the number of batches, not of rows: callers batch
 * (group commit), and merges run in the background — no OPTIMIZE here.
 */
export async function createChdbHistory(options: ChdbHistoryOptions): Promise<History> {
  const windowMs = options.unfinishedWindowMs ?? DEFAULT_UNFINISHED_WINDOW_MS;
  const now = options.now ?? Date.now;
  const dbPath = path.join(options.dataDir, 'history');
  fs.mkdirSync(dbPath, { recursive: true });

  const session = new Session(dbPath);
  try {
    for (const statement of HISTORY_SCHEMA) await session.queryAsync(statement);
  } catch (err) {
    session.close();
    await drainPending();
    throw new HermodError('unavailable', `history: could not apply the schema at ${dbPath}: ${describe(err)}`, { cause: err });
  }

  let closed = false;
  let closing: Promise<void> | undefined;
  const inFlight = new Set<Promise<unknown>>();

  /** Runs one database call, counted so that close() can wait for it, with errors as HermodError. */
  const run = <T>(what: string, call: () => Promise<T>): Promise<T> => {
    if (closed) return Promise.reject(new HermodError('unavailable', 'history is closed'));
    const p = call().catch((err: unknown) => {
      throw new HermodError('unavailable', `history: ${what} failed: ${describe(err)}`, { cause: err });
    });
    inFlight.add(p);
    const forget = (): void => {
      inFlight.delete(p);
    };
    p.then(forget, forget);
    return p;
  };

  const select = (what: string, sql: string, params: Record<string, unknown>): Promise<Record<string, unknown>[]> =>
    run(what, async () => parseJsonEachRow((await session.queryBindAsync(sql, params, JSON_EACH_ROW)).text()));

  const insert = (target: { table: string; columns: readonly string[] }, values: Buffer): Promise<unknown> =>
    run(`insert into ${target.table}`, () => session.insert({ table: target.table, columns: target.columns, values, format: 'JSONEachRow' }));

  return {
    async insertMessages(messages, events) {
      // Events first: a message row becomes visible only with its first
      // events already stored, so it never reads as having no status, and a
      // failed call leaves at most invisible events behind.
      if (events.length > 0) await insert(INSERTS.events, jsonEachRow(events, eventRow));
      if (messages.length > 0) await insert(INSERTS.messages, jsonEachRow(messages, messageRow));
    },

    async appendEvents(events) {
      if (events.length > 0) await insert(INSERTS.events, jsonEachRow(events, eventRow));
    },

    async getMessage(applicationId, id) {
      const rows = await select('getMessage', GET_MESSAGE, { id, applicationId });
      return rows.length > 0 ? toStoredMessage(rows[0]!) : undefined;
    },

    async listUnfinished(limit, after) {
      if (limit <= 0) return [];
      const rows = await select('listUnfinished', LIST_UNFINISHED, {
        since: Math.max(0, Math.trunc(now() - windowMs)),
        afterAcceptedAt: Math.trunc(after?.acceptedAt ?? 0),
        afterId: after?.id ?? '',
        limit: Math.min(Math.trunc(limit), 0xffff_ffff),
      });
      return rows.map(toStoredMessage) satisfies StoredMessage[];
    },

    async findMessageIdByCarrierId(carrierId) {
      if (carrierId === '') return undefined;
      const rows = await select('findMessageIdByCarrierId', FIND_MESSAGE_ID_BY_CARRIER_ID, { carrierId });
      return rows.length > 0 ? String(rows[0]!.messageId) : undefined;
    },

    async upsertApplication(app) {
      await insert(INSERTS.applications, jsonEachRow([app], applicationRow));
    },

    async getApplicationByName(name) {
      const rows = await select('getApplicationByName', GET_APPLICATION_BY_NAME, { name });
      return rows.length > 0 ? toApplication(rows[0]!) : undefined;
    },

    async getApplicationByApiKeyHash(hash): Promise<ApplicationRecord | undefined> {
      if (hash === '') return undefined;
      const rows = await select('getApplicationByApiKeyHash', GET_APPLICATION_BY_API_KEY_HASH, { apiKeyHash: hash });
      return rows.length > 0 ? toApplication(rows[0]!) : undefined;
    },

    async ping() {
      await run('ping', () => session.queryAsync(PING, JSON_EACH_ROW));
    },

    close() {
      closing ??= (async () => {
        closed = true;
        await Promise.allSettled([...inFlight]);
        session.close();
        // The engine is released only once nothing native uses it any more;
        // after this another data directory may be opened in this process.
        await drainPending();
      })();
      return closing;
    },
  };
}

function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0]!.slice(0, 500);
}
