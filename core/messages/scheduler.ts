import fs from 'node:fs';
import path from 'node:path';
import type { MessageRecord } from '../ports/message-history';
import { createTimeHeap } from '../../lib/time-heap';

export interface SchedulerOptions {
  now?: () => number;
  /**
   * Where messages due later than `horizonMs` wait, in one file per
   * `bucketMs` of schedule; without it every scheduled message is held in
   * memory. The directory is emptied when the scheduler is made: history is
   * where schedules are kept, and recovery adds every one back at the start.
   */
  spillDir?: string;
  /** Messages due within this long are held in memory (default 10 min). */
  horizonMs?: number;
  /** The schedule time one spill file covers (default 1 min, or the horizon if shorter). */
  bucketMs?: number;
}

export interface Scheduler {
  add(records: readonly MessageRecord[]): void;
  /** Held in memory. */
  readonly size: number;
  /** Waiting in spill files, due after the horizon. */
  readonly spilled: number;
  stop(): void;
}

/**
 * Holds messages until their scheduled time, to the second, then hands them
 * over. Schedules are durable because the messages are: after a restart,
 * recovery adds back every stored message that has not gone out.
 *
 * Only what is due within the horizon is held in memory; a message scheduled
 * for next month waits in a spill file of its minute, read back once that
 * minute comes within the horizon. A million messages scheduled for next
 * week cost disk, not core's heap.
 */
export function createScheduler(onDue: (records: MessageRecord[]) => void, options: SchedulerOptions = {}): Scheduler {
  const now = options.now ?? (() => Date.now());
  const horizonMs = options.horizonMs ?? 600_000;
  const bucketMs = options.bucketMs ?? Math.min(60_000, horizonMs);
  const dir = options.spillDir;
  const heap = createTimeHeap<MessageRecord>((r) => r.scheduledAt);
  let spilled = 0;
  /** Buckets that have a file (at most one per minute of the next 60 days), and the same earliest first. */
  const buckets = new Set<number>();
  const bucketOrder = createTimeHeap<number>((b) => b);
  /** Every message due before this is in memory; later ones are in the files of their bucket. */
  let loadedUntil = dir ? Math.ceil((now() + horizonMs) / bucketMs) * bucketMs : Number.POSITIVE_INFINITY;
  if (dir) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
  }
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const bucketFile = (bucket: number): string => path.join(dir!, `${bucket}.jsonl`);

  const spill = (records: readonly MessageRecord[]): void => {
    const byBucket = new Map<number, string[]>();
    for (const r of records) {
      const bucket = Math.floor(r.scheduledAt / bucketMs);
      const lines = byBucket.get(bucket) ?? [];
      lines.push(JSON.stringify(r));
      byBucket.set(bucket, lines);
    }
    for (const [bucket, lines] of byBucket) {
      fs.appendFileSync(bucketFile(bucket), `${lines.join('\n')}\n`, 'utf8');
      if (!buckets.has(bucket)) {
        buckets.add(bucket);
        bucketOrder.push(bucket);
      }
    }
    spilled += records.length;
  };

  /** Reads the buckets that came within the horizon into memory, and removes their files. */
  const load = (): void => {
    const until = Math.floor((now() + horizonMs) / bucketMs) * bucketMs + bucketMs;
    if (until <= loadedUntil) return;
    loadedUntil = until;
    while ((bucketOrder.peek() ?? Number.POSITIVE_INFINITY) * bucketMs < until) {
      const bucket = bucketOrder.pop()!;
      buckets.delete(bucket);
      const file = bucketFile(bucket);
      for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
        if (line === '') continue;
        heap.push(JSON.parse(line) as MessageRecord);
        spilled--;
      }
      fs.rmSync(file, { force: true });
    }
  };

  /** When the earliest spilled bucket comes within the horizon. */
  const nextLoad = (): number => (bucketOrder.peek() ?? Number.POSITIVE_INFINITY) * bucketMs - horizonMs;

  const arm = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (stopped) return;
    const next = Math.min(heap.peek()?.scheduledAt ?? Number.POSITIVE_INFINITY, nextLoad());
    if (next === Number.POSITIVE_INFINITY) return;
    // Timers longer than ~24.8 days overflow; wake up at least daily.
    timer = setTimeout(fire, Math.min(Math.max(0, next - now()), 86_400_000));
    timer.unref();
  };

  const fire = (): void => {
    if (buckets.size > 0) load();
    const t = now();
    const due: MessageRecord[] = [];
    while ((heap.peek()?.scheduledAt ?? Number.POSITIVE_INFINITY) <= t) due.push(heap.pop()!);
    arm();
    if (due.length > 0) onDue(due);
  };

  return {
    add(records) {
      const later = records.filter((r) => r.scheduledAt >= loadedUntil);
      for (const r of records) if (r.scheduledAt < loadedUntil) heap.push(r);
      if (later.length > 0) spill(later);
      arm();
    },
    get size() {
      return heap.size;
    },
    get spilled() {
      return spilled;
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
