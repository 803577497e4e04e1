import fs from 'node:fs';
import path from 'node:path';
import { openJsonLinesFile, type JsonLinesFile } from '../lib/json-lines-file';
import type { Logger } from '../lib/log';
import { rateLimitedWarning } from '../lib/rate-limited-warning';

/** A message a channel worker's carrier took: the carrier ids of its parts (none for a carrier that gives none), when, and its route. */
export interface Submitted {
  id: string;
  at: number;
  carrierIds: readonly string[];
  detail?: string;
}

/**
 * What a channel worker submitted lately, on disk in its data directory: the one party that still knows it when a
 * Redis bus came back without the `submitted` reports on its status stream, and core hands the messages over again.
 */
export interface SubmittedMemory {
  /** Kept at once in memory; written to disk with the others of the same turn of the event loop, in one append. */
  remember(id: string, carrierIds: readonly string[], detail?: string): void;
  /** The message's submit within the horizon, if this worker (or its process before a restart) made it. */
  recall(id: string): Submitted | undefined;
  /** Entries in memory, expired ones not yet swept included. */
  readonly size: number;
  /** Writes what is not on disk yet (done by itself once a turn). */
  flush(): void;
  close(): void;
}

/** How long a submit is remembered: a Redis loss is found, and core hands its messages over again, within minutes. */
export const SUBMITTED_HORIZON_MS = 3_600_000;
/**
 * Submits remembered at most, the oldest forgotten first: some 25 MB of a worker's heap when full (about 250 bytes
 * an entry), 100 seconds of submits at 1,000 a second.
 */
export const SUBMITTED_MAX_ENTRIES = 100_000;
/** The file is rewritten with the live entries once it holds twice as many lines, and at least this many. */
const REWRITE_AT_LEAST = 4096;
const SWEEP_EVERY_MS = 60_000;

/** An entry, as it is kept in memory and written as a line. */
interface Line {
  id: string;
  at: number;
  carrierIds: readonly string[];
  detail?: string;
}

/**
 * Opens the memory kept in `file` (made if missing): entries older than `horizonMs` are dropped, then the oldest
 * beyond `maxEntries`, and the file is rewritten with the rest (a torn last line, from a crash mid-append, dropped).
 * A disk that refuses it is logged and the memory kept in this process only; it never fails a send.
 */
export function openSubmittedMemory(options: { file: string; log: Logger; horizonMs?: number; maxEntries?: number; now?: () => number }): SubmittedMemory {
  const horizonMs = options.horizonMs ?? SUBMITTED_HORIZON_MS;
  const maxEntries = Math.max(1, options.maxEntries ?? SUBMITTED_MAX_ENTRIES);
  const now = options.now ?? Date.now;
  const { log } = options;
  const entries = new Map<string, Line>();
  /**
   * The entries in the order they came, from `head` on, the oldest first: forgotten from the front. Not the map's own
   * order: a map whose first entries were deleted skips their holes on each new look at its front, a scan as long as
   * the entries forgotten since it last compacted, for each submit. An entry remembered again leaves its older copy
   * here, skipped.
   */
  let order: Line[] = [];
  let head = 0;
  const keep = (line: Line): void => {
    entries.set(line.id, line);
    order.push(line);
  };
  const live = now();
  let file: JsonLinesFile<Line> | undefined;
  try {
    const opened = openJsonLinesFile<Line>(
      options.file,
      false,
      (value) => {
        const line = readLine(value);
        return line && live - line.at <= horizonMs ? line : undefined;
      },
      (line) => line,
    );
    file = opened.file;
    // Later lines replace earlier ones of the same message, and keep the order of submits.
    for (const line of opened.kept) keep(line);
    if (trim(live) > 0 || entries.size < opened.kept.length) file.rewrite(lines());
  } catch (err) {
    log.warn('could not open the file of messages this worker submitted; it remembers them in memory only', { err, file: options.file });
    file?.close();
    file = undefined;
  }
  const failedWrite = rateLimitedWarning(log, 'could not write to the file of messages this worker submitted; it remembers them in memory only', {
    count: 'writes',
  });

  let pending: Line[] = [];
  let scheduled: NodeJS.Immediate | undefined;
  /** The last route told: one string shared by its entries, not one each. */
  let lastDetail: string | undefined;

  function* lines(): Iterable<Line> {
    for (let i = head; i < order.length; i++) if (entries.get(order[i]!.id) === order[i]) yield order[i]!;
  }
  /** Forgets the entries past the horizon, then the oldest beyond the cap; how many. */
  function trim(t: number): number {
    let dropped = 0;
    while (head < order.length) {
      const e = order[head]!;
      if (entries.get(e.id) === e) {
        if (t - e.at <= horizonMs && entries.size <= maxEntries) break;
        entries.delete(e.id);
        dropped++;
      }
      head++;
    }
    // Compacted once its front is half of it, or once copies remembered again are: never more than twice the entries.
    if (head > 1024 && head * 2 > order.length) {
      order = order.slice(head);
      head = 0;
    } else if (order.length - head > 2 * Math.max(1024, entries.size)) {
      order = [...lines()];
      head = 0;
    }
    return dropped;
  }
  const flush = (): void => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    if (pending.length === 0 || !file) {
      pending = [];
      return;
    }
    const out = pending;
    pending = [];
    try {
      file.keepAll(out);
      if (file.lines >= Math.max(REWRITE_AT_LEAST, 2 * entries.size)) file.rewrite(lines());
    } catch (err) {
      failedWrite({ err, file: options.file });
    }
  };
  const sweep = setInterval(() => {
    trim(now());
    if (file && file.lines >= Math.max(REWRITE_AT_LEAST, 2 * entries.size)) {
      try {
        file.rewrite(lines());
      } catch (err) {
        failedWrite({ err, file: options.file });
      }
    }
  }, SWEEP_EVERY_MS).unref();

  return {
    remember(id, carrierIds, detail) {
      const at = now();
      if (detail !== undefined && detail === lastDetail) detail = lastDetail;
      lastDetail = detail;
      const line: Line = detail !== undefined ? { id, at, carrierIds: [...carrierIds], detail } : { id, at, carrierIds: [...carrierIds] };
      keep(line);
      trim(at);
      pending.push(line);
      scheduled ??= setImmediate(flush);
    },
    recall(id) {
      const e = entries.get(id);
      if (!e || now() - e.at > horizonMs) return undefined;
      return { ...e };
    },
    get size() {
      return entries.size;
    },
    flush,
    close() {
      clearInterval(sweep);
      flush();
      file?.close();
      file = undefined;
    },
  };
}

function readLine(value: unknown): Line | undefined {
  const v = value as Partial<Record<keyof Line, unknown>> | null;
  if (!v || typeof v.id !== 'string' || v.id === '' || typeof v.at !== 'number' || !Number.isFinite(v.at) || !Array.isArray(v.carrierIds)) return undefined;
  if (!v.carrierIds.every((c): c is string => typeof c === 'string' && c !== '')) return undefined;
  return { id: v.id, at: v.at, carrierIds: v.carrierIds, ...(typeof v.detail === 'string' ? { detail: v.detail } : {}) };
}

/** The file a worker of `channel` keeps its memory in, one a process at a time: see claimSubmittedMemoryFile. */
export interface ClaimedFile {
  file: string;
  release(): void;
}

/**
 * A file of `dir` for this process's worker of `channel`: workers of one channel started in several processes on
 * one data directory each take their own (`submitted-<channel>-<n>.jsonl`, its `.pid` beside it naming the process
 * that holds it), and a worker started again takes the first one free, its own of the last run when it runs alone.
 * A `.pid` of a process gone, or of this very process id (a container's process 1 started again), is free.
 */
export function claimSubmittedMemoryFile(dir: string, channel: string): ClaimedFile {
  fs.mkdirSync(dir, { recursive: true });
  for (let n = 0; ; n++) {
    const base = path.join(dir, `submitted-${channel}-${n}`);
    const pidFile = `${base}.pid`;
    if (claimedHere.has(pidFile) || !takePidFile(pidFile)) continue;
    claimedHere.add(pidFile);
    return {
      file: `${base}.jsonl`,
      release() {
        claimedHere.delete(pidFile);
        try {
          if (fs.readFileSync(pidFile, 'utf8').trim() === String(process.pid)) fs.unlinkSync(pidFile);
        } catch {
          // gone already: nothing to release
        }
      },
    };
  }
}

/** The files workers of this process hold now: two workers of one channel in one process (tests) take two. */
const claimedHere = new Set<string>();

function takePidFile(pidFile: string): boolean {
  for (let tries = 0; tries < 2; tries++) {
    try {
      fs.writeFileSync(pidFile, String(process.pid), { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let holder: number;
    try {
      holder = Number.parseInt(fs.readFileSync(pidFile, 'utf8').trim(), 10);
    } catch {
      continue; // released meanwhile
    }
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) return false;
    try {
      fs.unlinkSync(pidFile);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return false;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
