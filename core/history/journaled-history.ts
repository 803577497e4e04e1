import { createFlushBuffer } from './flush-buffer';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { CampaignStore } from '../ports/campaign-store';
import type { MessageRecord, StatusEvent } from '../ports/message-history';
import type { Logger } from '../../lib/log';
import { historyFlushFailures } from '../../lib/metrics';
import type { EncodedHistory } from './encoded-history';
import { writeCheckpoint, type Checkpoint } from './journal-checkpoint';
import { encodeBatch, encodeRecords, piecesAfter, type EncodedBatch } from './journal-lines';
import { listSegments, replayJournal, segmentName } from './journal-replay';

/**
 * History behind a write-ahead journal. A write is durable once its batch is
 * appended to the journal (one writev() per batch, optionally fdatasync'd);
 * a background flusher moves what was journaled into the history engine in
 * large inserts (ClickHouse wants few big inserts, not many small ones), then
 * records how far it got. On open, whatever was journaled but not flushed is
 * replayed first, so a crash loses nothing that was acknowledged.
 *
 * Reads go to the engine. A read of one message by id flushes first when
 * rows about that message wait (so it reads back its latest status), and
 * reads that must see everything (listUnfinished, campaign reads) flush first.
 */
interface JournaledHistoryOptions {
  inner: EncodedHistory;
  dir: string;
  log: Logger;
  /** How often journaled writes are flushed to the engine. */
  flushIntervalMs?: number;
  /** Flush early once this many rows are waiting. */
  flushRows?: number;
  /** fdatasync each append: survives power loss, not only process death. */
  fsync?: boolean;
  /** Start a new journal file past this size. */
  segmentBytes?: number;
}

export async function createJournaledHistory(options: JournaledHistoryOptions): Promise<EncodedHistory> {
  const { inner, dir, log } = options;
  const flushIntervalMs = options.flushIntervalMs ?? 200;
  const flushRows = options.flushRows ?? 50_000;
  const segmentBytes = options.segmentBytes ?? 64 * 1024 * 1024;
  const fsync = options.fsync ?? false;
  await fsp.mkdir(dir, { recursive: true });
  const checkpointFile = path.join(dir, 'checkpoint.json');
  const segmentPath = (n: number): string => path.join(dir, segmentName(n));

  const replay = await replayJournal(dir, inner, log, checkpointFile);
  let segment = replay.lastSegment + 1;
  let handle = await fsp.open(segmentPath(segment), 'a');
  let offset = 0;
  /** Set when a failed write may have left part of a batch behind: the next batch starts a new segment. */
  let torn = false;
  await writeCheckpoint(checkpointFile, { segment, offset: 0 }, fsync);
  for (const n of replay.segments) await fsp.rm(segmentPath(n), { force: true });
  if (replay.rows > 0) log.info('replayed journaled history writes', { rows: replay.rows });

  // Rows waiting for the flush, as the engine takes them, a Buffer per batch.
  let pendingMessages: Buffer[] = [];
  let pendingEvents: Buffer[] = [];
  let pendingMessageRows = 0;
  let pendingEventRows = 0;
  const pendingRows = (): number => pendingMessageRows + pendingEventRows;
  /**
   * The messages that pending rows are about, and those of the rows a flush
   * under way took: true when the message's own row waits, false when only
   * events of it do.
   */
  let pendingIds = new Map<string, boolean>();
  let flushingIds = new Map<string, boolean>();
  let appending: Promise<void> = Promise.resolve();
  let flushing: Promise<void> | undefined;
  /** A flush's rows as one buffer for an insert; valid until the next join (the two inserts of a flush run one after the other). */
  const join = createFlushBuffer();
  let closed = false;

  // Encoded once, here, straight from the records: the same bytes go to the journal now and to the engine at the flush.
  const append = (messages: readonly MessageRecord[], events: readonly StatusEvent[]): Promise<void> => {
    if (closed) return Promise.reject(new Error('history is closed'));
    return appendEncoded(
      encodeRecords(messages, events),
      messages.map((m) => m.id),
      events.map((e) => e.messageId),
    );
  };

  /** Rows already JSON (insertEncoded). */
  const appendRows = (
    messageRows: readonly string[],
    eventRows: readonly string[],
    messageIds: readonly string[],
    eventIds: readonly string[],
  ): Promise<void> => {
    if (closed) return Promise.reject(new Error('history is closed'));
    return appendEncoded(encodeBatch(messageRows, eventRows), messageIds, eventIds);
  };

  const appendEncoded = (batch: EncodedBatch, messageIds: readonly string[], eventIds: readonly string[]): Promise<void> => {
    const { journal, messages: messageBytes, events: eventBytes } = batch;
    const write = appending.then(async () => {
      if (offset > segmentBytes || torn) {
        const next = await fsp.open(segmentPath(segment + 1), 'a');
        const previous = handle;
        // Segment, handle and offset change together: a flush reads them as one checkpoint.
        [handle, segment, offset, torn] = [next, segment + 1, 0, false];
        await previous.close();
      }
      offset += await writeBatch(journal);
      for (const b of eventBytes) pendingEvents.push(b);
      for (const b of messageBytes) pendingMessages.push(b);
      pendingMessageRows += messageIds.length;
      pendingEventRows += eventIds.length;
      for (const id of eventIds) if (!pendingIds.has(id)) pendingIds.set(id, false);
      for (const id of messageIds) pendingIds.set(id, true);
      if (pendingRows() >= flushRows) void flush().catch(() => undefined);
    });
    appending = write.catch(() => undefined);
    return write;
  };

  /** Writes a batch's pieces in order; resolves with the bytes written, all of them. */
  const writeBatch = async (pieces: Buffer[]): Promise<number> => {
    const length = pieces.reduce((n, b) => n + b.length, 0);
    let written = 0;
    try {
      // A write may take less than asked (disk full): a batch is acknowledged only once all of it is there.
      while (written < length) {
        const rest = written === 0 ? pieces : piecesAfter(pieces, written);
        if (fsync) written += (await handle.writev(rest)).bytesWritten;
        // A write to the page cache takes microseconds: doing it in place keeps
        // the acknowledgement off the libuv thread pool, which chDB keeps busy.
        else written += fs.writevSync(handle.fd, rest);
      }
      if (fsync) await handle.datasync();
      return length;
    } catch (err) {
      // The caller hears the batch failed, so it must not come back on replay, nor
      // glue its torn tail onto the next batch's first line: cut it off.
      await handle.truncate(offset).catch(() => {
        torn = true;
      });
      throw err;
    }
  };

  const flush = (): Promise<void> => {
    flushing ??= (async () => {
      try {
        await appending;
        const messages = pendingMessages;
        const events = pendingEvents;
        const messageRows = pendingMessageRows;
        const eventRows = pendingEventRows;
        const upTo: Checkpoint = { segment, offset };
        if (messageRows + eventRows === 0) return;
        pendingMessages = [];
        pendingEvents = [];
        pendingMessageRows = 0;
        pendingEventRows = 0;
        [flushingIds, pendingIds] = [pendingIds, new Map()];
        // Events first, as two inserts: a message row becomes visible with its
        // events already there, and when the engine refuses the message rows
        // after taking the events, only the message rows are tried again (the
        // events table keeps every row it is given).
        let eventsIn = eventRows === 0;
        try {
          if (!eventsIn) await inner.insertEncoded(NO_ROWS, join(events));
          eventsIn = true;
          if (messageRows > 0) await inner.insertEncoded(join(messages), NO_ROWS);
        } catch (err) {
          // Keep them for the next flush; they are safe in the journal meanwhile.
          pendingMessages = messages.concat(pendingMessages);
          pendingMessageRows += messageRows;
          if (!eventsIn) {
            pendingEvents = events.concat(pendingEvents);
            pendingEventRows += eventRows;
          }
          for (const [id, row] of pendingIds) flushingIds.set(id, row || flushingIds.get(id) === true);
          pendingIds = flushingIds;
          historyFlushFailures.inc();
          log.warn('history flush failed; will retry', { err, rows: messageRows + eventRows });
          throw err;
        }
        await writeCheckpoint(checkpointFile, upTo, fsync);
        for (const n of await listSegments(dir)) if (n < upTo.segment) await fsp.rm(segmentPath(n), { force: true });
      } finally {
        flushingIds = new Map();
        flushing = undefined;
      }
    })();
    return flushing;
  };

  const timer = setInterval(() => void flush().catch(() => undefined), flushIntervalMs);
  timer.unref();

  /** A flush that covers every append made before the call (one already running may have started before them). */
  const flushAll = async (): Promise<void> => {
    await flush();
    await flush();
  };

  const waiting = (): boolean => pendingRows() > 0 || flushing !== undefined;
  const unflushed = (id: string): boolean => pendingIds.has(id) || flushingIds.has(id);

  /**
   * A read of a message by id whose rows (the message, or any of its events)
   * wait for their flush flushes them first: what this core stored is read
   * back by id at once and with its latest status, however long the flush
   * interval (a reply to a message sent a moment ago, an IM attempt, an
   * e-mail bounce after its delivery). Reads of messages with nothing
   * waiting, most of them, cost no flush.
   */
  const afterItsFlush = async <T>(id: string, read: () => Promise<T>): Promise<T> => {
    if (unflushed(id)) await flushAll();
    return read();
  };
  /** A lookup by something other than the id (a carrier id, a numeric id) that finds nothing while rows wait flushes them and looks again. */
  const foundOrAfterFlush = async <T>(read: () => Promise<T | undefined>): Promise<T | undefined> => {
    const found = await read();
    if (found !== undefined || !waiting()) return found;
    await flushAll();
    return read();
  };

  // Campaign reads that must see the messages this core just stored flush first.
  const campaigns: CampaignStore = {
    ...inner.campaigns,
    async messageIdsInRange(lo, hi) {
      await flushAll();
      return inner.campaigns.messageIdsInRange(lo, hi);
    },
    async reportRange(lo, hi) {
      await flushAll();
      return inner.campaigns.reportRange(lo, hi);
    },
    async progressRange(lo, hi, since) {
      await flushAll();
      return inner.campaigns.progressRange(lo, hi, since);
    },
    async *reportRows(lo, hi) {
      await flushAll();
      yield* inner.campaigns.reportRows(lo, hi);
    },
    async *reportJson(lo, hi, look) {
      await flushAll();
      yield* inner.campaigns.reportJson(lo, hi, look);
    },
  };

  return {
    campaigns,
    im: {
      ...inner.im,
      async listOpenMessages(since) {
        await flushAll();
        return inner.im.listOpenMessages(since);
      },
    },
    insertMessages: (messages, events) => append(messages, events),
    insertEncoded: (messageRows, eventRows) => {
      const messages = rowsOf(String(messageRows));
      const events = rowsOf(String(eventRows));
      const idsOf = (rows: string[], key: string): string[] => rows.map((r) => String(JSON.parse(r)[key]));
      return appendRows(messages, events, idsOf(messages, 'id'), idsOf(events, 'message_id'));
    },
    appendEvents: (events) => append([], events),
    getMessage: (applicationId, id) => afterItsFlush(id, () => inner.getMessage(applicationId, id)),
    findMessage: (id) => afterItsFlush(id, () => inner.findMessage(id)),
    async findMessageByNumericId(numericId) {
      const found = await foundOrAfterFlush(() => inner.findMessageByNumericId(numericId));
      return found && unflushed(found.id) ? afterItsFlush(found.id, () => inner.findMessageByNumericId(numericId)) : found;
    },
    async findMessages(ids) {
      // Records only: their events do not matter, their own rows do.
      if (ids.some((id) => pendingIds.get(id) || flushingIds.get(id))) await flushAll();
      return inner.findMessages(ids);
    },
    async getMessageByNumericId(applicationId, numericId) {
      const found = await foundOrAfterFlush(() => inner.getMessageByNumericId(applicationId, numericId));
      // Found, but newer events of it wait: read it again once they are in.
      return found && unflushed(found.id) ? afterItsFlush(found.id, () => inner.getMessageByNumericId(applicationId, numericId)) : found;
    },
    async listUnfinished(limit, after, acceptedBefore) {
      await flush();
      return inner.listUnfinished(limit, after, acceptedBefore);
    },
    async listAwaitingReceipt(limit, after, acceptedBefore) {
      await flush();
      return inner.listAwaitingReceipt(limit, after, acceptedBefore);
    },
    async listEvents(id) {
      // An operator's lookup: worth a flush to see the events of the last moments.
      await flushAll();
      return inner.listEvents(id);
    },
    async findMessageIdsByCarrierIds(carrierIds) {
      // A carrier id found in the engine may have been given again since (an SMSC's counter wraps, or restarts), to a
      // message whose submit still waits here: what waits goes in first. Asked only where hot state knows no message.
      if (waiting()) await flushAll();
      return inner.findMessageIdsByCarrierIds(carrierIds);
    },
    async keyedMessagesSince(since, limit) {
      // Read at a start: what the journal still holds must be in.
      if (waiting()) await flushAll();
      return inner.keyedMessagesSince(since, limit);
    },
    async countQuotaUse(applicationId, since) {
      // Read once per quota counter and process: the messages of the last moments count too.
      if (waiting()) await flushAll();
      return inner.countQuotaUse(applicationId, since);
    },
    async sendersSince(since) {
      // Read at a start: what the journal still holds must be in.
      if (waiting()) await flushAll();
      return inner.sendersSince(since);
    },
    async lastSendsTo(handsets, since, now) {
      // A reply to a message sent in the last moments: it must be in.
      if (waiting()) await flushAll();
      return inner.lastSendsTo(handsets, since, now);
    },
    async latestStatuses(ids) {
      // Statuses still waiting for their flush are part of the answer.
      if (ids.some((id) => unflushed(id))) await flushAll();
      return inner.latestStatuses(ids);
    },
    getMessageRoute: (applicationId, id) => afterItsFlush(id, () => inner.getMessageRoute(applicationId, id)),
    upsertApplication: (app) => inner.upsertApplication(app),
    getApplicationByName: (name) => inner.getApplicationByName(name),
    listApplications: () => inner.listApplications(),
    recordOptOuts: (entries) => inner.recordOptOuts(entries),
    insertShortLinks: (links) => inner.insertShortLinks(links),
    getShortLink: (code) => inner.getShortLink(code),
    recordLinkClicks: (clicks) => inner.recordLinkClicks(clicks),
    countLinkClicks: (code) => inner.countLinkClicks(code),
    listOptOuts: (applicationId) => inner.listOptOuts(applicationId),
    recordBlocks: (entries) => inner.recordBlocks(entries),
    listBlocks: (scope) => inner.listBlocks(scope),
    getApplicationByApiKeyHash: (hash) => inner.getApplicationByApiKeyHash(hash),
    ping: () => inner.ping(),
    answeredAt: () => inner.answeredAt?.() ?? 0,
    engineMemoryBytes: () => inner.engineMemoryBytes(),
    flush: flushAll,
    async close() {
      clearInterval(timer);
      await appending;
      // A flush under way took only what was pending when it began: flush again until nothing is left
      // (a clean stop leaves the engine complete). A failing engine keeps the rest in the journal.
      try {
        do await flush();
        while (pendingRows() > 0);
      } catch {}
      closed = true;
      await handle.close();
      await inner.close();
    },
  };
}

const NO_ROWS = Buffer.alloc(0);

/** Encoded rows, one a line; an empty line is no row (the engine skips it too). */
const rowsOf = (text: string): string[] => (text ? text.split('\n').filter((r) => r.length > 0) : []);
