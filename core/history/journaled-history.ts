import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { History, MessageRecord, StatusEvent } from '../ports/history';
import type { Logger } from '../../lib/log';
import { historyFlushFailures } from '../../lib/metrics';
import { eventRow, messageRow } from './rows';

/**
 * History behind a write-ahead journal. A write is durable once its batch is
 * appended to the journal (one write() per batch, optionally fdatasync'd);
 * a background flusher moves what was journaled into the history engine in
 * large inserts (ClickHouse wants few big inserts, not many small ones), then
 * records how far it got. On open, whatever was journaled but not flushed is
 * replayed first, so a crash loses nothing that was acknowledged.
 *
 * Reads go to the engine; callers that must see their own fresh writes keep
 * them in memory (recent messages, hot state). listUnfinished flushes first.
 */
export interface JournaledHistoryOptions {
  inner: History;
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

/**
 * Journal lines: `E<row>` or `M<row>`, the row being the JSONEachRow line the
 * history table takes (rows.ts), so a flush sends them as they are. Lines of
 * the earlier form, `{"m":record}` / `{"e":event}`, are still read on replay.
 */
interface LegacyEntry {
  m?: MessageRecord;
  e?: StatusEvent;
}

interface Checkpoint {
  segment: number;
  offset: number;
}

const SEGMENT = (n: number): string => `journal-${String(n).padStart(10, '0')}.ndjson`;
const SEGMENT_RE = /^journal-(\d{10})\.ndjson$/;

export async function createJournaledHistory(options: JournaledHistoryOptions): Promise<History & { flush(): Promise<void> }> {
  const { inner, dir, log } = options;
  const flushIntervalMs = options.flushIntervalMs ?? 200;
  const flushRows = options.flushRows ?? 50_000;
  const segmentBytes = options.segmentBytes ?? 64 * 1024 * 1024;
  await fsp.mkdir(dir, { recursive: true });
  const checkpointFile = path.join(dir, 'checkpoint.json');

  const readCheckpoint = async (): Promise<Checkpoint> => {
    try {
      return JSON.parse(await fsp.readFile(checkpointFile, 'utf8')) as Checkpoint;
    } catch {
      return { segment: 0, offset: 0 };
    }
  };
  const writeCheckpoint = async (cp: Checkpoint): Promise<void> => {
    const tmp = `${checkpointFile}.tmp`;
    await fsp.writeFile(tmp, JSON.stringify(cp));
    await fsp.rename(tmp, checkpointFile);
  };
  const segments = async (): Promise<number[]> =>
    (await fsp.readdir(dir)).map((f) => SEGMENT_RE.exec(f)?.[1]).filter((n): n is string => n !== undefined).map(Number).sort((a, b) => a - b);

  // Replay what was journaled after the last checkpoint.
  const start = await readCheckpoint();
  let replayed = 0;
  for (const n of await segments()) {
    if (n < start.segment) continue;
    const text = await fsp.readFile(path.join(dir, SEGMENT(n)), 'utf8');
    const from = n === start.segment ? start.offset : 0;
    const messages: string[] = [];
    const events: string[] = [];
    const lines = text.slice(from).split('\n');
    // The last line is complete only when the text ends with a newline: a torn one was never acknowledged.
    if (!text.endsWith('\n')) lines.pop();
    for (const line of lines) {
      if (!line) continue;
      const kind = line[0];
      if (kind === 'E') events.push(line.slice(1));
      else if (kind === 'M') messages.push(line.slice(1));
      else {
        try {
          const entry = JSON.parse(line) as LegacyEntry;
          if (entry.m) messages.push(JSON.stringify(messageRow(entry.m)));
          if (entry.e) events.push(JSON.stringify(eventRow(entry.e)));
        } catch {
          continue;
        }
      }
    }
    if (messages.length + events.length > 0) await inner.insertEncoded(messages.join('\n'), events.join('\n'));
    replayed += messages.length + events.length;
  }
  const existing = await segments();
  let segment = (existing.at(-1) ?? 0) + 1;
  let handle = await fsp.open(path.join(dir, SEGMENT(segment)), 'a');
  let offset = 0;
  await writeCheckpoint({ segment, offset: 0 });
  for (const n of existing) await fsp.rm(path.join(dir, SEGMENT(n)), { force: true });
  if (replayed > 0) log.info('replayed journaled history writes', { rows: replayed });

  let pendingMessages: string[] = [];
  let pendingEvents: string[] = [];
  let appending: Promise<void> = Promise.resolve();
  let flushing: Promise<void> | undefined;
  let closed = false;

  // Encoded once, here: the same text goes to the journal now and to the engine at the flush.
  const append = (messages: readonly MessageRecord[], events: readonly StatusEvent[]): Promise<void> =>
    appendRows(messages.map((m) => JSON.stringify(messageRow(m))), events.map((e) => JSON.stringify(eventRow(e))));

  const appendRows = (messageRows: readonly string[], eventRows: readonly string[]): Promise<void> => {
    if (closed) return Promise.reject(new Error('history is closed'));
    let text = '';
    for (const r of eventRows) text += 'E' + r + '\n';
    for (const r of messageRows) text += 'M' + r + '\n';
    const buf = Buffer.from(text);
    const write = appending.then(async () => {
      if (offset > segmentBytes) {
        await handle.close();
        segment++;
        handle = await fsp.open(path.join(dir, SEGMENT(segment)), 'a');
        offset = 0;
      }
      if (options.fsync) {
        await handle.write(buf, 0, buf.length);
        await handle.datasync();
      } else {
        // A write to the page cache takes microseconds: doing it in place keeps
        // the acknowledgement off the libuv thread pool, which chDB keeps busy.
        fs.writeSync(handle.fd, buf, 0, buf.length);
      }
      offset += buf.length;
      for (const r of eventRows) pendingEvents.push(r);
      for (const r of messageRows) pendingMessages.push(r);
      if (pendingEvents.length + pendingMessages.length >= flushRows) void flush().catch(() => undefined);
    });
    appending = write.catch(() => undefined);
    return write;
  };

  const flush = (): Promise<void> => {
    flushing ??= (async () => {
      try {
        await appending;
        const messages = pendingMessages;
        const events = pendingEvents;
        const upTo: Checkpoint = { segment, offset };
        if (messages.length + events.length === 0) return;
        pendingMessages = [];
        pendingEvents = [];
        try {
          await inner.insertEncoded(messages.join('\n'), events.join('\n'));
        } catch (err) {
          // Keep them for the next flush; they are safe in the journal meanwhile.
          pendingMessages = messages.concat(pendingMessages);
          pendingEvents = events.concat(pendingEvents);
          historyFlushFailures.inc();
          log.warn('history flush failed; will retry', { err, rows: messages.length + events.length });
          throw err;
        }
        await writeCheckpoint(upTo);
        for (const n of await segments()) if (n < upTo.segment) await fsp.rm(path.join(dir, SEGMENT(n)), { force: true });
      } finally {
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

  // Campaign reads that must see the messages this core just stored flush first.
  const campaigns: History['campaigns'] = {
    ...inner.campaigns,
    async messageIdsInRange(lo, hi) {
      await flushAll();
      return inner.campaigns.messageIdsInRange(lo, hi);
    },
    async reportRange(lo, hi) {
      await flushAll();
      return inner.campaigns.reportRange(lo, hi);
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
    insertEncoded: (messageRows, eventRows) => appendRows(messageRows ? messageRows.split('\n') : [], eventRows ? eventRows.split('\n') : []),
    appendEvents: (events) => append([], events),
    getMessage: (applicationId, id) => inner.getMessage(applicationId, id),
    findMessage: (id) => inner.findMessage(id),
    getMessageByNumericId: (applicationId, numericId) => inner.getMessageByNumericId(applicationId, numericId),
    async listUnfinished(limit, after) {
      await flush();
      return inner.listUnfinished(limit, after);
    },
    findMessageIdByCarrierId: (carrierId) => inner.findMessageIdByCarrierId(carrierId),
    upsertApplication: (app) => inner.upsertApplication(app),
    getApplicationByName: (name) => inner.getApplicationByName(name),
    listApplications: () => inner.listApplications(),
    recordOptOuts: (entries) => inner.recordOptOuts(entries),
    insertShortLinks: (links) => inner.insertShortLinks(links),
    getShortLink: (code) => inner.getShortLink(code),
    recordLinkClicks: (clicks) => inner.recordLinkClicks(clicks),
    countLinkClicks: (code) => inner.countLinkClicks(code),
    listOptOuts: (applicationId) => inner.listOptOuts(applicationId),
    getApplicationByApiKeyHash: (hash) => inner.getApplicationByApiKeyHash(hash),
    ping: () => inner.ping(),
    flush: flushAll,
    async close() {
      clearInterval(timer);
      await appending;
      await flush().catch(() => undefined);
      closed = true;
      await handle.close();
      await inner.close();
    },
  };
}
