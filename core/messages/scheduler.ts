import type { MessageRecord } from '../ports/message-history';

/**
 * Holds messages until their scheduled time, to the second, then hands them
 * over. Schedules are durable because the messages are: after a restart,
 * recovery adds back every stored message that has not gone out.
 */
interface Scheduler {
  add(records: readonly MessageRecord[]): void;
  readonly size: number;
  stop(): void;
}

export function createScheduler(onDue: (records: MessageRecord[]) => void, now: () => number = Date.now): Scheduler {
  // Kept sorted by time; insertion by binary search. Timers are set only for the earliest.
  const queue: MessageRecord[] = [];
  let timer: NodeJS.Timeout | undefined;

  const arm = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (queue.length === 0) return;
    // Timers longer than ~24.8 days overflow; wake up at least daily.
    const wait = Math.min(Math.max(0, queue[0]!.scheduledAt - now()), 86_400_000);
    timer = setTimeout(fire, wait);
    timer.unref();
  };

  const fire = (): void => {
    const t = now();
    let n = 0;
    while (n < queue.length && queue[n]!.scheduledAt <= t) n++;
    const due = queue.splice(0, n);
    arm();
    if (due.length > 0) onDue(due);
  };

  return {
    add(records) {
      for (const r of records) {
        let lo = 0;
        let hi = queue.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (queue[mid]!.scheduledAt <= r.scheduledAt) lo = mid + 1;
          else hi = mid;
        }
        queue.splice(lo, 0, r);
      }
      arm();
    },
    get size() {
      return queue.length;
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
