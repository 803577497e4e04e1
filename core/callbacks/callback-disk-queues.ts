import fs from 'node:fs';
import { appendWhole } from '../../lib/append-whole';
import path from 'node:path';
import type { Logger } from '../../lib/log';
import type { CallbackJob } from './callback-job';
import { encodeOwed, type QueueState } from './callback-outbox-format';

export interface CallbackDiskQueuesOptions {
  dir: string;
  log: Logger;
  fsync?: boolean;
  /** A queue's last segment takes appends until it is this big (default 4 MiB). */
  segmentBytes?: number;
  /** Each application's queue as the journal last recorded it. */
  states: ReadonlyMap<string, QueueState>;
}

/** Jobs read from the head of a queue, not yet taken. */
export interface Peeked {
  jobs: CallbackJob[];
  segment: number;
  /** Where the next unread line of the segment starts. */
  offset: number;
  /** Lines read (damaged ones included). */
  lines: number;
}

/**
 * The callbacks an application is owed that do not fit in memory: a FIFO per
 * application, on disk, in segment files named by a number (`<n>.ndjson`,
 * read in increasing order). New jobs are appended to the last segment; jobs
 * that leave memory are written as a new first segment, numbered below every
 * other. Which segments belong to the queue, and how far each was read, is
 * recorded in the outbox's journal (QueueState): a segment numbered below
 * `low` was written by a move that the journal never recorded, so it is not
 * part of the queue and is removed at open.
 */
export interface CallbackDiskQueues {
  count(applicationId: string): number;
  /** Applications with jobs on disk. */
  applications(): string[];
  readonly total: number;
  /** Appends jobs at the end of their application's queue: on disk when this returns. */
  append(applicationId: string, jobs: readonly CallbackJob[]): void;
  /** Up to `max` jobs from the head of the queue, in order, without taking them. */
  peek(applicationId: string, max: number): Peeked | undefined;
  /** What `peek` returned was recorded as taken in the journal. */
  taken(applicationId: string, peeked: Peeked): void;
  /** Writes jobs as a new head segment (not yet part of the queue); returns its number. */
  writeHead(applicationId: string, jobs: readonly CallbackJob[]): number;
  /** The journal recorded the segment `writeHead` wrote: it is the queue's head now. */
  placed(applicationId: string, segment: number, jobs: number): void;
  /** The journal could not record it: the segment is removed. */
  discard(applicationId: string, segment: number): void;
  state(applicationId: string): QueueState;
  close(): void;
}

interface Segment {
  seq: number;
  size: number;
  from: number;
}

interface Queue {
  dir: string;
  low: number;
  /** The highest segment number used. */
  hi: number;
  segments: Segment[];
  count: number;
  fd: number;
  fdSeq: number;
}

const NEWLINE = 0x0a;
const SEGMENT = /^(-?\d+)\.ndjson$/;
/** Read at once from a segment: a few hundred jobs. */
const READ_BYTES = 256 * 1024;

const fileOf = (q: Queue, seq: number): string => path.join(q.dir, `${seq}.ndjson`);

function countLines(buf: Buffer, from: number): number {
  let n = 0;
  for (let i = buf.indexOf(NEWLINE, from); i !== -1; i = buf.indexOf(NEWLINE, i + 1)) n++;
  return n;
}

export function openCallbackDiskQueues(options: CallbackDiskQueuesOptions): CallbackDiskQueues {
  const { dir, log } = options;
  const segmentBytes = options.segmentBytes ?? 4 * 1024 * 1024;
  fs.mkdirSync(dir, { recursive: true });
  const queues = new Map<string, Queue>();
  let total = 0;

  const queueOf = (applicationId: string): Queue => {
    let q = queues.get(applicationId);
    if (!q) {
      const state = options.states.get(applicationId);
      const low = state?.low ?? 0;
      q = { dir: path.join(dir, Buffer.from(applicationId, 'utf8').toString('hex')), low, hi: low - 1, segments: [], count: 0, fd: -1, fdSeq: NaN };
      fs.mkdirSync(q.dir, { recursive: true });
      queues.set(applicationId, q);
    }
    return q;
  };

  const closeFd = (q: Queue): void => {
    if (q.fd >= 0) fs.closeSync(q.fd);
    q.fd = -1;
    q.fdSeq = NaN;
  };

  // Open: drop what no journal line recorded, cut torn tails, count what is left.
  for (const name of fs.readdirSync(dir)) {
    const applicationId = Buffer.from(name, 'hex').toString('utf8');
    const q = queueOf(applicationId);
    const from = options.states.get(applicationId)?.from;
    const seqs = fs
      .readdirSync(q.dir)
      .map((f) => SEGMENT.exec(f))
      .filter((m) => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    for (const seq of seqs) {
      const file = fileOf(q, seq);
      if (seq < q.low) {
        fs.rmSync(file, { force: true });
        continue;
      }
      q.hi = Math.max(q.hi, seq);
      const bytes = fs.readFileSync(file);
      const whole = bytes.lastIndexOf(NEWLINE) + 1;
      if (whole < bytes.length) fs.truncateSync(file, whole);
      const start = Math.min(from?.get(seq) ?? 0, whole);
      const lines = countLines(bytes.subarray(0, whole), start);
      if (lines === 0) {
        fs.rmSync(file, { force: true });
        continue;
      }
      q.segments.push({ seq, size: whole, from: start });
      q.count += lines;
      total += lines;
    }
    if (q.segments.length > 0) log.info('callbacks owed on disk', { application: applicationId, jobs: q.count });
  }

  const write = (fd: number, buf: Buffer, at: number): void => appendWhole(fd, buf, at, options.fsync ?? false);

  return {
    count: (applicationId) => queues.get(applicationId)?.count ?? 0,
    applications: () => [...queues].filter(([, q]) => q.count > 0).map(([a]) => a),
    get total() {
      return total;
    },
    append(applicationId, jobs) {
      if (jobs.length === 0) return;
      const q = queueOf(applicationId);
      let tail = q.segments.at(-1);
      if (!tail || tail.size >= segmentBytes) {
        tail = { seq: ++q.hi, size: 0, from: 0 };
        q.segments.push(tail);
      }
      if (q.fdSeq !== tail.seq) {
        closeFd(q);
        q.fd = fs.openSync(fileOf(q, tail.seq), 'a');
        q.fdSeq = tail.seq;
      }
      const buf = encodeOwed(jobs);
      write(q.fd, buf, tail.size);
      tail.size += buf.length;
      q.count += jobs.length;
      total += jobs.length;
    },
    peek(applicationId, max) {
      const q = queues.get(applicationId);
      const head = q?.segments[0];
      if (!q || !head || max <= 0) return undefined;
      const fd = fs.openSync(fileOf(q, head.seq), 'r');
      try {
        const jobs: CallbackJob[] = [];
        let offset = head.from;
        let lines = 0;
        let want = Math.min(READ_BYTES, Math.max(16 * 1024, max * 1024), head.size - offset);
        while (lines < max && offset < head.size) {
          const buf = Buffer.allocUnsafe(want);
          const got = fs.readSync(fd, buf, 0, want, offset);
          let start = 0;
          for (let end = buf.indexOf(NEWLINE, 0); end !== -1 && end < got && lines < max; end = buf.indexOf(NEWLINE, start)) {
            lines++;
            try {
              jobs.push(JSON.parse(buf.toString('utf8', start + 1, end)) as CallbackJob);
            } catch {
              log.warn('callback queue on disk: damaged line skipped', { application: applicationId, segment: head.seq });
            }
            start = end + 1;
          }
          // A line longer than what was read: read more at once.
          if (start === 0) {
            if (want >= head.size - offset) break;
            want = Math.min(want * 2, head.size - offset);
          }
          offset += start;
        }
        return { jobs, segment: head.seq, offset, lines };
      } finally {
        fs.closeSync(fd);
      }
    },
    taken(applicationId, peeked) {
      const q = queues.get(applicationId)!;
      const head = q.segments[0]!;
      head.from = peeked.offset;
      q.count -= peeked.lines;
      total -= peeked.lines;
      if (head.from >= head.size) {
        q.segments.shift();
        if (q.fdSeq === head.seq) closeFd(q);
        fs.rmSync(fileOf(q, head.seq), { force: true });
      }
    },
    writeHead(applicationId, jobs) {
      const q = queueOf(applicationId);
      // Below every segment ever recorded, so a segment left by a crash before `placed` is never taken for part of the queue.
      const seq = q.low - 1;
      const fd = fs.openSync(fileOf(q, seq), 'w');
      try {
        write(fd, encodeOwed(jobs), 0);
      } finally {
        fs.closeSync(fd);
      }
      return seq;
    },
    placed(applicationId, segment, jobs) {
      const q = queueOf(applicationId);
      q.low = segment;
      q.segments.unshift({ seq: segment, size: fs.statSync(fileOf(q, segment)).size, from: 0 });
      q.count += jobs;
      total += jobs;
    },
    discard(applicationId, segment) {
      fs.rmSync(fileOf(queueOf(applicationId), segment), { force: true });
    },
    state(applicationId) {
      const q = queues.get(applicationId);
      if (!q) return { low: options.states.get(applicationId)?.low ?? 0, from: new Map() };
      return { low: q.low, from: new Map(q.segments.filter((s) => s.from > 0).map((s) => [s.seq, s.from])) };
    },
    close() {
      for (const q of queues.values()) closeFd(q);
    },
  };
}
