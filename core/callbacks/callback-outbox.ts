import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../lib/log';
import type { CallbackJob } from './callback-job';
import { encodeOwed, encodeSettled, replayOutbox } from './callback-outbox-format';

export interface CallbackOutboxOptions {
  /** Directory of the outbox (under the data directory). */
  dir: string;
  log: Logger;
  /** fdatasync every append: survives power loss, not only process death. */
  fsync?: boolean;
  /** Rewrite the file with only the owed jobs once it is this big and mostly settled (default 8 MiB). */
  compactBytes?: number;
}

/**
 * The callbacks this core owes, journaled in its data directory so they
 * survive kill -9: a job is written here before it is published or before the
 * bus record that carried it is acknowledged, and settled once delivered,
 * refused, given up, or handed to a bus that keeps records across restarts.
 * What is owed at start comes back from `owed()`.
 *
 * Every write is one synchronous append (callers batch), so the file's order
 * is the order of the calls, and a job is on disk (page cache; with `fsync`,
 * the device) before the call returns. Settled jobs are dropped by rewriting
 * the file once it is mostly settled, so it stays about the size of what is
 * owed.
 */
export interface CallbackOutbox {
  /** Jobs owed, in the order they were first owed (what a restart replays). */
  owed(): CallbackJob[];
  /** Records jobs as owed, or a retry's new state (attempt, notBefore) of an owed job. */
  put(jobs: readonly CallbackJob[]): void;
  /** Jobs that no longer need to be kept (unknown ones are ignored). */
  settle(eventIds: readonly string[]): void;
  /**
   * A bus that keeps records took these jobs: settles each unless it was
   * owed again since (a retry of it recorded by this core in between).
   */
  handOver(jobs: readonly CallbackJob[]): void;
  readonly size: number;
  /** Bytes of the file (tests, metrics). */
  readonly fileBytes: number;
  close(): void;
}

const FILE = 'outbox.ndjson';

export function openCallbackOutbox(options: CallbackOutboxOptions): CallbackOutbox {
  const { dir, log } = options;
  const compactBytes = options.compactBytes ?? 8 * 1024 * 1024;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, FILE);
  const tmp = `${file}.tmp`;
  // A rewrite that a crash interrupted: the old file is still whole.
  fs.rmSync(tmp, { force: true });

  const live = new Map<string, { job: CallbackJob; bytes: number }>();
  let liveBytes = 0;
  let fileBytes = 0;
  let fd = -1;
  let closed = false;

  const remember = (job: CallbackJob, bytes: number): void => {
    const before = live.get(job.eventId);
    if (before) liveBytes -= before.bytes;
    live.set(job.eventId, { job, bytes });
    liveBytes += bytes;
  };
  const forget = (eventId: string): boolean => {
    const before = live.get(eventId);
    if (!before) return false;
    live.delete(eventId);
    liveBytes -= before.bytes;
    return true;
  };

  /** Appends all of `buf`, or on failure cuts the file back so no torn line is left for later lines to join. */
  const append = (buf: Buffer): void => {
    if (closed) throw new Error('callback outbox is closed');
    let written = 0;
    try {
      while (written < buf.length) written += fs.writeSync(fd, buf, written, buf.length - written);
      if (options.fsync) fs.fdatasyncSync(fd);
    } catch (err) {
      try {
        fs.ftruncateSync(fd, fileBytes);
      } catch {
        // the write's own error is the one to report
      }
      throw err;
    }
    fileBytes += buf.length;
  };

  /** Writes what is owed to a new file and swaps it in (rename is atomic: a crash leaves one whole file). */
  const rewrite = (): void => {
    const jobs = [...live.values()].map((e) => e.job);
    const buf = encodeOwed(jobs);
    const out = fs.openSync(tmp, 'w');
    try {
      fs.writeFileSync(out, buf);
      if (options.fsync) fs.fdatasyncSync(out);
    } finally {
      fs.closeSync(out);
    }
    fs.renameSync(tmp, file);
    if (fd >= 0) fs.closeSync(fd);
    fd = fs.openSync(file, 'a');
    fileBytes = buf.length;
  };
  const maybeCompact = (): void => {
    if (fileBytes >= compactBytes && fileBytes >= 4 * liveBytes) rewrite();
  };

  // Replay, then start from a file that holds exactly what is owed (no torn tail, nothing settled).
  let existing: Buffer | undefined;
  try {
    existing = fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (existing) {
    const { owed, damaged } = replayOutbox(existing);
    for (const job of owed.values()) remember(job, encodeOwed([job]).length);
    if (damaged > 0) log.warn('callback outbox: damaged lines skipped', { lines: damaged });
    if (owed.size > 0) log.info('callbacks owed from before the restart', { jobs: owed.size });
  }
  rewrite();

  const settle = (eventIds: readonly string[]): void => {
    const known = [...new Set(eventIds)].filter((id) => live.has(id));
    if (known.length === 0) return;
    append(encodeSettled(known));
    for (const id of known) forget(id);
    maybeCompact();
  };

  return {
    owed: () => [...live.values()].map((e) => e.job),
    put(jobs) {
      if (jobs.length === 0) return;
      const lines = jobs.map((j) => encodeOwed([j]));
      append(Buffer.concat(lines));
      jobs.forEach((j, i) => {
        remember(j, lines[i]!.length);
      });
      maybeCompact();
    },
    settle,
    handOver: (jobs) => settle(jobs.filter((j) => live.get(j.eventId)?.job === j).map((j) => j.eventId)),
    get size() {
      return live.size;
    },
    get fileBytes() {
      return fileBytes;
    },
    close() {
      if (closed) return;
      closed = true;
      fs.closeSync(fd);
    },
  };
}
