import type { ApplicationRecord } from '../ports/account-store';
import type { MessageRecord, StatusEvent, StoredMessage } from '../ports/message-history';
import { HermodError } from '../../lib/errors';
import { HASHED_MARK } from '../../lib/uuid';
import { QUOTA_EXEMPT_VIA } from '../domain/quota-exempt-via';
import { isMessageStatus, type MessageStatus } from '../domain/message-status';
import type { EncodedHistory, EncodedRows } from './encoded-history';
import { BACKFILL_DONE, HISTORY_BACKFILLS, HISTORY_SCHEMA, RECORD_BACKFILL } from './schema';
import { createSqlCampaignStore } from './sql-campaign-store';
import { createSqlImStore } from './sql-im-store';
import {
  FIND_APPLICATION_OF_MESSAGE,
  FIND_MESSAGES,
  KEYED_MESSAGES_SINCE,
  FIND_MESSAGE_BY_NUMERIC_ID,
  FIND_ID_BY_NUMERIC_ID,
  FIND_MESSAGE_IDS_BY_CARRIER_IDS,
  LATEST_STATUSES,
  LAST_SENDS_TO,
  SENDERS_SINCE,
  COUNT_QUOTA_USE,
  GET_APPLICATION_BY_API_KEY_HASH,
  GET_APPLICATION_BY_NAME,
  GET_MESSAGE,
  GET_MESSAGE_ROUTE,
  GET_TAKEN_PARTS,
  INSERTS,
  COUNT_LINK_CLICKS,
  GET_SHORT_LINK,
  LIST_APPLICATIONS,
  LIST_OPT_OUTS,
  LIST_BLOCKS,
  LIST_UNFINISHED,
  LIST_AWAITING_RECEIPT,
  LIST_MESSAGE_EVENTS,
  PING,
  ENGINE_MEMORY,
} from './queries';
import { applicationRow, dateTime64, eventRow, jsonEachRow, messageRow, toApplication, toMessageRecord, toNumber, toStoredMessage } from './rows';

/** Ids per query that looks up many (FIND_MESSAGES, FIND_MESSAGE_IDS_BY_CARRIER_IDS). */
const IDS_PER_QUERY = 1000;

/**
 * What history needs from a ClickHouse engine: DDL, parameterized selects
 * read as JSONEachRow, and JSONEachRow batch inserts. chDB (embedded) and a
 * ClickHouse server (@clickhouse/client) each provide one, and both run the
 * exact same schema and queries through createSqlHistory.
 */
export interface HistoryEngine {
  readonly name: string;
  exec(sql: string): Promise<void>;
  select(sql: string, params: Record<string, unknown>): Promise<Record<string, unknown>[]>;
  /**
   * A long read, as the engine produces it: each batch the rows of one block
   * of its output, each row its columns in the query's order. Read on a
   * connection of its own, so writes go on meanwhile; ending the iteration
   * early cancels the query.
   */
  stream(sql: string, params: Record<string, unknown>): AsyncIterable<unknown[][]>;
  /**
   * A long read of a query whose SQL ends with its FORMAT: the output bytes
   * as the engine produces them, in chunks that may end anywhere (the server
   * sends one continuous output; chDB formats each block on its own, so a
   * format's delimiters between rows of two blocks are missing there, the
   * ones before or after each row are not). Same connection and cancelling
   * as stream().
   */
  streamBytes(sql: string, params: Record<string, unknown>): AsyncIterable<Uint8Array>;
  /** A parameterized statement without a result (a lightweight DELETE). */
  command(sql: string, params: Record<string, unknown>): Promise<void>;
  insert(table: string, columns: readonly string[], rows: Buffer): Promise<void>;
  close(): Promise<void>;
}

export interface SqlHistoryOptions {
  /** listUnfinished only looks at messages accepted within this window (default 70 days). */
  unfinishedWindowMs?: number;
  now?: () => number;
}

const DEFAULT_UNFINISHED_WINDOW_MS = 70 * 24 * 60 * 60 * 1000;

export async function createSqlHistory(engine: HistoryEngine, options: SqlHistoryOptions = {}): Promise<EncodedHistory> {
  const windowMs = options.unfinishedWindowMs ?? DEFAULT_UNFINISHED_WINDOW_MS;
  const now = options.now ?? Date.now;
  /** The parameters of a page of LIST_UNFINISHED or LIST_AWAITING_RECEIPT. */
  const unfinishedPage = (limit: number, after?: { acceptedAt: number; id: string }, acceptedBefore?: number) => ({
    since: Math.max(0, Math.trunc(now() - windowMs)),
    afterAcceptedAt: Math.trunc(after?.acceptedAt ?? 0),
    afterId: after?.id ?? '',
    // Without a bound: a year past now, well inside DateTime64's range.
    acceptedBefore: Math.trunc(acceptedBefore ?? now() + 366 * 86_400_000),
    limit: Math.min(Math.trunc(limit), 0xffff_ffff),
  });
  try {
    for (const statement of HISTORY_SCHEMA) await engine.exec(statement);
    for (const backfill of HISTORY_BACKFILLS) {
      const [row] = await engine.select(BACKFILL_DONE, { name: backfill.name });
      if (Number(row?.done ?? 0) > 0) continue;
      for (const statement of backfill.statements) await engine.exec(statement);
      await engine.command(RECORD_BACKFILL, { name: backfill.name });
    }
  } catch (err) {
    await engine.close().catch(() => undefined);
    throw new HermodError('unavailable', `history (${engine.name}): could not apply the schema: ${describe(err)}`, { cause: err });
  }

  let closed = false;
  let closing: Promise<void> | undefined;
  const inFlight = new Set<Promise<unknown>>();
  let answeredAt = 0;

  /** One engine call, counted so close() can wait for it, with errors as HermodError. */
  const run = <T>(what: string, call: () => Promise<T>): Promise<T> => {
    if (closed) return Promise.reject(new HermodError('unavailable', 'history is closed'));
    const p = call().then(
      (answer) => {
        answeredAt = Date.now();
        return answer;
      },
      (err: unknown) => {
        throw new HermodError('unavailable', `history (${engine.name}): ${what} failed: ${describe(err)}`, { cause: err });
      },
    );
    inFlight.add(p);
    const forget = (): void => void inFlight.delete(p);
    p.then(forget, forget);
    return p;
  };
  const select = (what: string, sql: string, params: Record<string, unknown>) => run(what, () => engine.select(sql, params));
  const insert = (target: { table: string; columns: readonly string[] }, rows: Buffer) =>
    run(`insert into ${target.table}`, () => engine.insert(target.table, target.columns, rows));

  /** A stream with errors as HermodError; not counted in flight: the engine's close() ends its streams. */
  async function* stream(what: string, sql: string, params: Record<string, unknown>): AsyncGenerator<unknown[][]> {
    if (closed) throw new HermodError('unavailable', 'history is closed');
    try {
      yield* engine.stream(sql, params);
    } catch (err) {
      throw new HermodError('unavailable', `history (${engine.name}): ${what} failed: ${describe(err)}`, { cause: err });
    }
  }

  async function* streamBytes(what: string, sql: string, params: Record<string, unknown>): AsyncGenerator<Uint8Array> {
    if (closed) throw new HermodError('unavailable', 'history is closed');
    try {
      yield* engine.streamBytes(sql, params);
    } catch (err) {
      throw new HermodError('unavailable', `history (${engine.name}): ${what} failed: ${describe(err)}`, { cause: err });
    }
  }

  const io = {
    select,
    insert,
    stream,
    streamBytes,
    command: (what: string, sql: string, params: Record<string, unknown>) => run(what, () => engine.command(sql, params)),
  };

  const getMessage = async (applicationId: string, id: string) => {
    const rows = await select('getMessage', GET_MESSAGE, { id, applicationId });
    return rows.length > 0 ? toStoredMessage(rows[0]!) : undefined;
  };

  return {
    campaigns: createSqlCampaignStore(io),
    im: createSqlImStore(io),
    flush: async () => undefined,
    async insertMessages(messages, events) {
      // Events first: a message row becomes visible only with its first events
      // already stored, so it never reads as having no status.
      if (events.length > 0) await insert(INSERTS.events, jsonEachRow(events, eventRow));
      if (messages.length > 0) await insert(INSERTS.messages, jsonEachRow(messages, messageRow));
    },
    async insertEncoded(messageRows, eventRows) {
      if (eventRows.length > 0) await insert(INSERTS.events, asBytes(eventRows));
      if (messageRows.length > 0) await insert(INSERTS.messages, asBytes(messageRows));
    },
    async appendEvents(events) {
      if (events.length > 0) await insert(INSERTS.events, jsonEachRow(events, eventRow));
    },
    getMessage,
    async findMessage(id) {
      const rows = await select('findMessage', FIND_APPLICATION_OF_MESSAGE, { id });
      return rows.length > 0 ? getMessage(String(rows[0]!.applicationId), id) : undefined;
    },
    async findMessageByNumericId(numericId) {
      const rows = await select('findMessageByNumericId', FIND_MESSAGE_BY_NUMERIC_ID, { numericId });
      return rows.length > 0 ? getMessage(String(rows[0]!.applicationId), String(rows[0]!.id)) : undefined;
    },
    async findMessages(ids) {
      const found: MessageRecord[] = [];
      // A server takes query parameters in the URL: a thousand ids are about 40 KB of it.
      for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
        const rows = await select('findMessages', FIND_MESSAGES, { ids: ids.slice(i, i + IDS_PER_QUERY) });
        for (const row of rows) found.push(toMessageRecord(row));
      }
      return found;
    },
    async getMessageByNumericId(applicationId, numericId) {
      const rows = await select('getMessageByNumericId', FIND_ID_BY_NUMERIC_ID, { numericId, applicationId });
      return rows.length > 0 ? getMessage(applicationId, String(rows[0]!.id)) : undefined;
    },
    async listUnfinished(limit, after, acceptedBefore) {
      if (limit <= 0) return [];
      const rows = await select('listUnfinished', LIST_UNFINISHED, unfinishedPage(limit, after, acceptedBefore));
      return rows.map(toStoredMessage) satisfies StoredMessage[];
    },
    async listAwaitingReceipt(limit, after, acceptedBefore) {
      if (limit <= 0) return [];
      const rows = await select('listAwaitingReceipt', LIST_AWAITING_RECEIPT, unfinishedPage(limit, after, acceptedBefore));
      return rows.map((r) => ({ ...toStoredMessage(r), carrierIds: Array.isArray(r.carrierIds) ? r.carrierIds.map(String) : [] }));
    },
    async listEvents(id) {
      const rows = await select('listEvents', LIST_MESSAGE_EVENTS, { id });
      return rows.map((r) => ({
        messageId: id,
        applicationId: String(r.applicationId),
        status: String(r.status) as StatusEvent['status'],
        at: toNumber(r.at),
        detail: String(r.detail),
        carrierId: String(r.carrierId),
        errorCode: String(r.errorCode),
      }));
    },
    async getMessageRoute(applicationId, id) {
      const rows = await select('getMessageRoute', GET_MESSAGE_ROUTE, { id, applicationId });
      const row = rows[0];
      if (row) return { route: String(row.detail ?? ''), carrierId: String(row.carrierId ?? ''), at: toNumber(row.at) };
      // Never submitted whole: refused after its carrier took some of its parts, perhaps.
      const parts = await select('getMessageRoute', GET_TAKEN_PARTS, { id, applicationId });
      if (parts.length === 0) return undefined;
      return {
        route: String(parts[0]!.detail ?? ''),
        carrierId: '',
        at: toNumber(parts[0]!.at),
        takenPartCarrierIds: parts.map((p) => String(p.carrierId)),
      };
    },
    async findMessageIdsByCarrierIds(carrierIds) {
      const found = new Map<string, string>();
      const asked = carrierIds.filter((c) => c !== '');
      for (let i = 0; i < asked.length; i += IDS_PER_QUERY) {
        const rows = await select('findMessageIdsByCarrierIds', FIND_MESSAGE_IDS_BY_CARRIER_IDS, { carrierIds: asked.slice(i, i + IDS_PER_QUERY) });
        for (const row of rows) found.set(String(row.carrierId), String(row.messageId));
      }
      return found;
    },
    async latestStatuses(ids) {
      const found = new Map<string, { status: MessageStatus; at: number }>();
      const asked = [...new Set(ids)];
      for (let i = 0; i < asked.length; i += IDS_PER_QUERY) {
        const rows = await select('latestStatuses', LATEST_STATUSES, { ids: asked.slice(i, i + IDS_PER_QUERY) });
        for (const row of rows) {
          const status = String(row.latestStatus);
          if (isMessageStatus(status)) found.set(String(row.id), { status, at: toNumber(row.latestAt) });
        }
      }
      return found;
    },
    async keyedMessagesSince(since, limit) {
      const rows = await select('keyedMessagesSince', KEYED_MESSAGES_SINCE, {
        since: Math.trunc(since),
        mark: HASHED_MARK,
        limit: Math.max(0, Math.trunc(limit)),
      });
      return rows.map((r) => ({ id: String(r.id), numericId: toNumber(r.numericId), applicationId: String(r.applicationId) }));
    },
    async countQuotaUse(applicationId, since) {
      const rows = await select('countQuotaUse', COUNT_QUOTA_USE, { applicationId, since: Math.trunc(since), exempt: [...QUOTA_EXEMPT_VIA] });
      return toNumber(rows[0]?.used ?? 0);
    },
    async sendersSince(since) {
      const rows = await select('sendersSince', SENDERS_SINCE, { since: Math.trunc(since) });
      return rows.map((r) => ({ source: String(r.source), mask: String(r.mask), applicationId: String(r.applicationId), at: toNumber(r.at) }));
    },
    async lastSendsTo(handsets, since, now) {
      if (handsets.length === 0) return [];
      const rows = await select('lastSendsTo', LAST_SENDS_TO, { handsets: [...new Set(handsets)], since: Math.trunc(since), now: Math.trunc(now) });
      return rows.map((r) => ({
        messageId: String(r.messageId),
        applicationId: String(r.applicationId),
        source: String(r.source),
        mask: String(r.mask),
        acceptedAt: toNumber(r.acceptedAt),
      }));
    },
    async upsertApplication(app) {
      await insert(INSERTS.applications, jsonEachRow([app], applicationRow));
    },
    async getApplicationByName(name) {
      const rows = await select('getApplicationByName', GET_APPLICATION_BY_NAME, { name });
      return rows.length > 0 ? toApplication(rows[0]!) : undefined;
    },
    async insertShortLinks(links) {
      if (links.length === 0) return;
      await insert(
        INSERTS.shortLinks,
        jsonEachRow(links, (l) => ({
          code: l.code,
          url: l.url,
          message_id: l.messageId,
          application_id: l.applicationId,
          created_at: dateTime64(l.createdAt),
        })),
      );
    },
    async getShortLink(code) {
      const rows = await select('getShortLink', GET_SHORT_LINK, { code });
      const r = rows[0];
      return r
        ? { code: String(r.code), url: String(r.url), messageId: String(r.messageId), applicationId: String(r.applicationId), createdAt: toNumber(r.createdAt) }
        : undefined;
    },
    async recordLinkClicks(clicks) {
      if (clicks.length === 0) return;
      await insert(
        INSERTS.linkClicks,
        jsonEachRow(clicks, (c) => ({ code: c.code, at: dateTime64(c.at), user_agent: c.userAgent, ip: c.ip })),
      );
    },
    async countLinkClicks(code) {
      const rows = await select('countLinkClicks', COUNT_LINK_CLICKS, { code });
      return toNumber(rows[0]?.clicks ?? 0);
    },
    async recordOptOuts(entries) {
      if (entries.length === 0) return;
      await insert(
        INSERTS.optOuts,
        jsonEachRow(entries, (e) => ({ application_id: e.applicationId, handset: e.handset, opted_out: e.optedOut ? 1 : 0, at: dateTime64(e.at) })),
      );
    },
    async listOptOuts(applicationId = '') {
      const rows = await select('listOptOuts', LIST_OPT_OUTS, { applicationId });
      return rows.map((r) => ({ applicationId: String(r.applicationId), handset: String(r.handset), optedOut: true, at: toNumber(r.at) }));
    },
    async recordBlocks(entries) {
      if (entries.length === 0) return;
      await insert(
        INSERTS.blockList,
        jsonEachRow(entries, (e) => ({ scope: e.scope, prefix: e.prefix, blocked: e.blocked ? 1 : 0, at: dateTime64(e.at) })),
      );
    },
    async listBlocks(scope) {
      const rows = await select('listBlocks', LIST_BLOCKS, { all: scope === undefined ? 1 : 0, scope: scope ?? '' });
      return rows.map((r) => ({ scope: String(r.scope), prefix: String(r.prefix), blocked: true, at: toNumber(r.at) }));
    },
    async listApplications() {
      return (await select('listApplications', LIST_APPLICATIONS, {})).map(toApplication);
    },
    async getApplicationByApiKeyHash(hash): Promise<ApplicationRecord | undefined> {
      if (hash === '') return undefined;
      const rows = await select('getApplicationByApiKeyHash', GET_APPLICATION_BY_API_KEY_HASH, { apiKeyHash: hash });
      return rows.length > 0 ? toApplication(rows[0]!) : undefined;
    },
    async engineMemoryBytes() {
      const [row] = await select('engineMemoryBytes', ENGINE_MEMORY, {});
      return toNumber(row?.bytes ?? 0);
    },
    async ping() {
      await select('ping', PING, {});
    },
    answeredAt: () => answeredAt,
    close() {
      closing ??= (async () => {
        closed = true;
        await Promise.allSettled([...inFlight]);
        await engine.close();
      })();
      return closing;
    },
  };
}

function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0]!.slice(0, 500);
}

const asBytes = (rows: EncodedRows): Buffer => (typeof rows === 'string' ? Buffer.from(rows, 'utf8') : rows);
