import { Session, drainPending, type ChdbResult } from 'chdb';
import { StandinSqlError } from './clickhouse-standin-sql';

/**
 * chDB sessions for the ClickHouse HTTP stand-in. Every chDB Session on one
 * data directory is its own connection with its own current database, and
 * sessions run queries side by side, so a pool of them serves concurrent
 * requests the way a server's query threads do. An HTTP `session_id` gets a
 * session of its own that keeps its state between requests, as on a server.
 */
export interface EngineSession {
  /** Makes `database` current for what follows (a server sets it per request). */
  use(database: string): Promise<void>;
  query(sql: string, params: Record<string, unknown> | undefined, format: string): Promise<ChdbResult>;
  insertRaw(table: string, columns: string[] | undefined, data: Buffer, format: string): Promise<{ rowsWritten: number; bytesWritten: number }>;
}

interface Slot {
  session: Session;
  database: string;
}

export interface StandinEngine {
  /** Runs `work` on a pooled session, or on the named HTTP session (refusing a second request while one runs). */
  withSession<T>(httpSession: string | undefined, timeoutSeconds: number, work: (s: EngineSession) => Promise<T>): Promise<T>;
  databaseExists(name: string): Promise<boolean>;
  close(): Promise<void>;
}

export function createStandinEngine(dataDir: string, poolSize: number): StandinEngine {
  const idle: Slot[] = [];
  const waiting: ((slot: Slot) => void)[] = [];
  let created = 0;
  const named = new Map<string, { slot: Slot; busy: boolean; expiry?: NodeJS.Timeout }>();
  const all = new Set<Session>();

  const open = (): Slot => {
    // clickhouse-local takes `SELECT`-less expressions as queries; a server does not.
    const session = new Session(dataDir, { connectionArgs: ['--implicit_select=0'] });
    all.add(session);
    return { session, database: 'default' };
  };
  const lease = (): Promise<Slot> => {
    const slot = idle.pop();
    if (slot) return Promise.resolve(slot);
    if (created < poolSize) {
      created++;
      return Promise.resolve(open());
    }
    return new Promise((resolve) => waiting.push(resolve));
  };
  const release = (slot: Slot): void => {
    const next = waiting.shift();
    if (next) next(slot);
    else idle.push(slot);
  };

  const view = (slot: Slot): EngineSession => ({
    async use(database) {
      if (slot.database === database) return;
      await slot.session.queryAsync(`USE ${quoteIdentifier(database)}`);
      slot.database = database;
    },
    query: (sql, params, format) =>
      params && Object.keys(params).length > 0 ? slot.session.queryBindAsync(sql, params, { format }) : slot.session.queryAsync(sql, { format }),
    async insertRaw(table, columns, data, format) {
      const summary = await slot.session.insert({ table, ...(columns ? { columns } : {}), values: data, format: format as 'JSONEachRow' });
      return { rowsWritten: summary.rowsWritten, bytesWritten: summary.bytesWritten };
    },
  });

  return {
    async withSession(httpSession, timeoutSeconds, work) {
      if (httpSession === undefined) {
        const slot = await lease();
        try {
          return await work(view(slot));
        } finally {
          release(slot);
        }
      }
      let entry = named.get(httpSession);
      if (entry?.busy) throw new StandinSqlError(373, 'SESSION_IS_LOCKED', `Session ${httpSession} is locked by a concurrent client`);
      if (!entry) {
        entry = { slot: open(), busy: false };
        named.set(httpSession, entry);
      }
      clearTimeout(entry.expiry);
      entry.busy = true;
      try {
        return await work(view(entry.slot));
      } finally {
        entry.busy = false;
        const current = entry;
        current.expiry = setTimeout(() => {
          named.delete(httpSession);
          all.delete(current.slot.session);
          current.slot.session.close();
        }, timeoutSeconds * 1000);
        current.expiry.unref();
      }
    },
    async databaseExists(name) {
      const slot = await lease();
      try {
        const result = await slot.session.queryBindAsync(
          'SELECT count() FROM system.databases WHERE name = {name:String}',
          { name },
          { format: 'TabSeparated' },
        );
        return result.text().trim() === '1';
      } finally {
        release(slot);
      }
    },
    async close() {
      for (const entry of named.values()) clearTimeout(entry.expiry);
      for (const session of all) session.close();
      all.clear();
      await drainPending();
    },
  };
}

function quoteIdentifier(name: string): string {
  return '`' + name.replaceAll('\\', '\\\\').replaceAll('`', '\\`') + '`';
}
