import type { CallbackJob } from './callback-job';

/** What one try of a job came to: finished (delivered, refused, given up), or to be tried again at this time. */
export type TryOutcome = { done: true } | { done: false; retryAt: number };

export interface RetryQueuesOptions {
  tryJob: (job: CallbackJob) => Promise<TryOutcome>;
  /** A job is finished: it no longer needs to be kept. */
  onDone: (job: CallbackJob) => void;
  /** A job's next try was scheduled (its new attempt and notBefore). */
  onRescheduled: (job: CallbackJob) => void;
  /** Most messages being tried at once (default 64). */
  maxConcurrent?: number;
  now?: () => number;
}

export interface RetryQueues {
  /** Whether the message has callbacks waiting here (its later ones must queue behind them). */
  has(messageId: string): boolean;
  /** Queues a job behind the message's others; the first of a message is tried at its notBefore. */
  add(job: CallbackJob): void;
  readonly size: number;
  /** Stops scheduling; resolves once the tries under way are done. */
  stop(): Promise<void>;
}

interface MessageQueue {
  messageId: string;
  jobs: CallbackJob[];
  /** When the first job is to be tried. */
  due: number;
  running: boolean;
}

/**
 * Callbacks waiting for their next try, in one process: a FIFO per message
 * (later callbacks of a message wait behind its failed one, so the receiver
 * still sees them in order) and a timer at the earliest due message. Nothing
 * is re-published while it waits; the outbox keeps it across restarts.
 */
export function createRetryQueues(o: RetryQueuesOptions): RetryQueues {
  const now = o.now ?? Date.now;
  const maxConcurrent = o.maxConcurrent ?? 64;
  const queues = new Map<string, MessageQueue>();
  const due = new DueHeap();
  let jobs = 0;
  let running = 0;
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Infinity;
  let stopped = false;
  let firing = false;
  let idle: (() => void) | undefined;

  const arm = (): void => {
    const next = due.peek();
    if (stopped || next === undefined || running >= maxConcurrent) return;
    if (timer && timerAt <= next.due) return;
    if (timer) clearTimeout(timer);
    timerAt = next.due;
    // setTimeout takes at most 2^31-1 ms; a later time is re-armed on waking.
    timer = setTimeout(fire, Math.min(0x7fffffff, Math.max(0, next.due - now())));
  };

  function fire(): void {
    if (firing) return; // a run that ended at once, inside this loop: the loop goes on
    firing = true;
    if (timer) clearTimeout(timer);
    timer = undefined;
    timerAt = Infinity;
    const t = now();
    while (!stopped && running < maxConcurrent) {
      const next = due.peek();
      if (!next || next.due > t) break;
      due.pop();
      const q = queues.get(next.messageId);
      // Stale entries (a queue rescheduled since, or already running) are skipped.
      if (!q || q.running || q.due !== next.due) continue;
      void run(q);
    }
    firing = false;
    arm();
  }

  async function run(q: MessageQueue): Promise<void> {
    q.running = true;
    running++;
    try {
      while (!stopped && q.jobs.length > 0) {
        const job = q.jobs[0]!;
        if (job.notBefore > now()) {
          schedule(q, job.notBefore);
          return;
        }
        let outcome: TryOutcome;
        try {
          outcome = await o.tryJob(job);
        } catch {
          outcome = { done: false, retryAt: now() + 1000 };
        }
        if (outcome.done) {
          q.jobs.shift();
          jobs--;
          o.onDone(job);
          continue;
        }
        const next = { ...job, attempt: job.attempt + 1, notBefore: outcome.retryAt };
        q.jobs[0] = next;
        o.onRescheduled(next);
        schedule(q, next.notBefore);
        return;
      }
      if (q.jobs.length === 0) queues.delete(q.messageId);
    } finally {
      q.running = false;
      running--;
      if (stopped && running === 0) idle?.();
      if (!stopped) fire();
    }
  }

  const schedule = (q: MessageQueue, at: number): void => {
    q.due = at;
    due.push({ due: at, messageId: q.messageId });
  };

  return {
    has: (messageId) => queues.has(messageId),
    add(job) {
      jobs++;
      const q = queues.get(job.messageId);
      if (q) {
        q.jobs.push(job);
        return;
      }
      const created: MessageQueue = { messageId: job.messageId, jobs: [job], due: job.notBefore, running: false };
      queues.set(job.messageId, created);
      due.push({ due: job.notBefore, messageId: job.messageId });
      arm();
    },
    get size() {
      return jobs;
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (running > 0) await new Promise<void>((resolve) => (idle = resolve));
    },
  };
}

/** A binary min-heap of (due, messageId). */
class DueHeap {
  private items: { due: number; messageId: string }[] = [];

  peek(): { due: number; messageId: string } | undefined {
    return this.items[0];
  }

  push(item: { due: number; messageId: string }): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent]!.due <= a[i]!.due) break;
      [a[parent], a[i]] = [a[i]!, a[parent]!];
      i = parent;
    }
  }

  pop(): { due: number; messageId: string } | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && a[l]!.due < a[m]!.due) m = l;
        if (r < a.length && a[r]!.due < a[m]!.due) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i]!, a[m]!];
        i = m;
      }
    }
    return top;
  }
}
