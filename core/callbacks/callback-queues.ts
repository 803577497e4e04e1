import { callbackOrderKey, type CallbackJob } from './callback-job';
import { createTimeHeap } from '../../lib/time-heap';

/**
 * What one try of a job came to: finished (refused, `gaveUp` after its retry window, or `delivered`: its receiver
 * took it), or to be tried again at this time (`askedUntil`: the time the receiver asked for, with Retry-After,
 * before which a delivery of another callback does not bring the retry forward; after it, one does).
 */
export type TryOutcome = { done: true; delivered?: boolean; gaveUp?: boolean } | { done: false; retryAt: number; askedUntil?: number };

export interface CallbackQueuesOptions {
  tryJob: (job: CallbackJob) => Promise<TryOutcome>;
  /** A job is finished: it no longer needs to be kept. */
  onDone: (job: CallbackJob) => void;
  /** A job's next try was scheduled (its new attempt and notBefore). */
  onRescheduled: (job: CallbackJob) => void;
  /** A job let go untried: a later status of its message waits behind it, and the one before it was given up. */
  onSuperseded?: (job: CallbackJob) => void;
  /** Most messages of one application's receiver (its status, reply or IM status URL) being tried at once (default 256). */
  maxPerApplication?: number;
  /** A receiver's waiting callbacks are tried early, on it taking one, at most this often (default 30 s). */
  catchUpEveryMs?: number;
  now?: () => number;
}

export interface CallbackQueues {
  /** Whether the message (or the handset's replies: callbackOrderKey) has callbacks queued here. */
  has(key: string): boolean;
  /** Queues a job behind the message's others; the first of a message is tried at its notBefore. */
  add(job: CallbackJob): void;
  /** Whether the job may be taken back now: it is not being tried. */
  canRemove(job: CallbackJob): boolean;
  /** Takes a job back (its message's later jobs are taken back first): it is given again later. */
  remove(job: CallbackJob): void;
  readonly size: number;
  /** Stops scheduling; resolves once the tries under way are done. */
  stop(): Promise<void>;
}

interface MessageQueue {
  /** callbackOrderKey of its jobs: a message's, or a handset's replies to the application. */
  key: string;
  /** Its lane: the application and the kind of its callbacks, which each go to a URL of their own (laneKey). */
  lane: string;
  jobs: CallbackJob[];
  /** When the first job is to be tried. */
  due: number;
  /** In its lane's ready list or being tried. */
  ready: boolean;
  /** Its first job is being tried. */
  running: boolean;
  /** Until when its receiver asked it to wait (Retry-After): not tried early before then; 0 when it did not ask. */
  heldUntil: number;
}

/** One receiver's share: the messages due now, in the order they became due, and how many are being tried. */
interface Lane {
  key: string;
  ready: MessageQueue[];
  head: number;
  running: number;
}

/**
 * Every callback this dispatcher owes, from its first try to its last, in one
 * process: a FIFO per message (later callbacks of a message wait behind an
 * earlier one, so the receiver sees them in order), a lane per application
 * and kind of callback (status, reply, IM status: each goes to a URL of its
 * own; each lane has at most `maxPerApplication` messages being tried at
 * once, so a receiver that is slow or down holds back only its own
 * callbacks, not another application's nor the same application's replies),
 * and a timer at the earliest message waiting for a retry. Nothing is
 * re-published while it waits; the outbox keeps it across restarts. When a
 * receiver takes a callback, its lane's messages waiting for a retry are
 * tried again at once: a receiver back from an outage gets what it missed
 * now, not at each one's back-off (up to an hour).
 * One that fails again goes on with its back-off; a receiver that fails
 * every other call is caught up with at most every `catchUpEveryMs`.
 */
export function createCallbackQueues(o: CallbackQueuesOptions): CallbackQueues {
  const now = o.now ?? Date.now;
  const maxPerApplication = o.maxPerApplication ?? 256;
  const queues = new Map<string, MessageQueue>();
  const lanes = new Map<string, Lane>();
  /** Per lane, its messages waiting for a retry after a failed try. */
  const retrying = new Map<string, Set<MessageQueue>>();
  const catchUpEveryMs = o.catchUpEveryMs ?? 30_000;
  /** When each lane's waiting callbacks were last tried early. */
  const caughtUp = new Map<string, number>();
  // (due, queue key), earliest first.
  const due = createTimeHeap<{ due: number; key: string }>((e) => e.due);
  let jobs = 0;
  let running = 0;
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Infinity;
  let stopped = false;
  let idle: (() => void) | undefined;

  const laneOf = (key: string): Lane => {
    let lane = lanes.get(key);
    if (!lane) {
      lane = { key, ready: [], head: 0, running: 0 };
      lanes.set(key, lane);
    }
    return lane;
  };

  /** Starts the lane's ready messages while it has room. */
  const drain = (lane: Lane): void => {
    while (!stopped && lane.running < maxPerApplication && lane.head < lane.ready.length) {
      const q = lane.ready[lane.head]!;
      lane.ready[lane.head++] = undefined as never;
      // Taken back (every job of it) since it became ready.
      if (queues.get(q.key) !== q) continue;
      void run(q);
    }
    if (lane.head === lane.ready.length) {
      lane.ready = [];
      lane.head = 0;
    } else if (lane.head >= 1024 && lane.head * 2 >= lane.ready.length) {
      lane.ready = lane.ready.slice(lane.head);
      lane.head = 0;
    }
    if (lane.running === 0 && lane.ready.length === 0) lanes.delete(lane.key);
  };

  const waitForRetry = (q: MessageQueue): void => {
    let waiting = retrying.get(q.lane);
    if (!waiting) retrying.set(q.lane, (waiting = new Set()));
    waiting.add(q);
  };
  const stopRetrying = (q: MessageQueue): void => {
    const waiting = retrying.get(q.lane);
    if (waiting?.delete(q) && waiting.size === 0) retrying.delete(q.lane);
  };

  /** The receiver of this lane took a callback: its messages waiting for a retry are tried now. */
  const receiverBack = (laneKey: string): void => {
    const waiting = retrying.get(laneKey);
    if (!waiting) return;
    const t = now();
    if (t - (caughtUp.get(laneKey) ?? -Infinity) < catchUpEveryMs) return;
    caughtUp.set(laneKey, t);
    if (caughtUp.size > 10_000) caughtUp.clear();
    retrying.delete(laneKey);
    for (const q of waiting) {
      if (queues.get(q.key) !== q || q.ready || q.jobs.length === 0) continue;
      // Its receiver asked for longer: caught up at a later delivery, once that time is past.
      if (q.heldUntil > t) {
        waitForRetry(q);
        continue;
      }
      q.jobs[0] = { ...q.jobs[0]!, notBefore: t };
      q.due = t;
      makeReady(q);
    }
  };

  const makeReady = (q: MessageQueue): void => {
    stopRetrying(q);
    q.ready = true;
    const lane = laneOf(q.lane);
    lane.ready.push(q);
    drain(lane);
  };

  const arm = (): void => {
    const next = due.peek();
    if (stopped || next === undefined) return;
    if (timer && timerAt <= next.due) return;
    if (timer) clearTimeout(timer);
    timerAt = next.due;
    // setTimeout takes at most 2^31-1 ms; a later time is re-armed on waking.
    timer = setTimeout(fire, Math.min(0x7fffffff, Math.max(0, next.due - now())));
  };

  function fire(): void {
    timer = undefined;
    timerAt = Infinity;
    const t = now();
    while (!stopped) {
      const next = due.peek();
      if (!next || next.due > t) break;
      due.pop();
      const q = queues.get(next.key);
      // Stale entries (a queue rescheduled since, or already ready) are skipped.
      if (!q || q.ready || q.due !== next.due) continue;
      makeReady(q);
    }
    arm();
  }

  async function run(q: MessageQueue): Promise<void> {
    // A lane with a message running is kept, so this is the one its `finally` finds.
    const lane = laneOf(q.lane);
    lane.running++;
    running++;
    q.running = true;
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
          if (outcome.delivered) receiverBack(q.lane);
          // A message's statuses that waited out a whole retry window behind this one are old news by now: only its
          // latest is tried, with a window of its own. (A handset's replies are messages of their own: all kept.)
          if (outcome.gaveUp && q.key === job.messageId)
            for (const superseded of q.jobs.splice(0, q.jobs.length - 1)) {
              jobs--;
              o.onSuperseded?.(superseded);
              o.onDone(superseded);
            }
          continue;
        }
        const next = { ...job, attempt: job.attempt + 1, notBefore: outcome.retryAt };
        q.jobs[0] = next;
        o.onRescheduled(next);
        schedule(q, next.notBefore);
        q.heldUntil = outcome.askedUntil ?? 0;
        waitForRetry(q);
        return;
      }
      if (q.jobs.length === 0) {
        queues.delete(q.key);
        stopRetrying(q);
      } else q.ready = false; // stopped
    } finally {
      q.running = false;
      lane.running--;
      running--;
      if (stopped && running === 0) idle?.();
      if (!stopped) drain(lane);
    }
  }

  const schedule = (q: MessageQueue, at: number): void => {
    q.ready = false;
    q.due = at;
    due.push({ due: at, key: q.key });
    arm();
  };

  return {
    has: (key) => queues.has(key),
    add(job) {
      jobs++;
      const key = callbackOrderKey(job);
      const q = queues.get(key);
      if (q) {
        q.jobs.push(job);
        return;
      }
      const created: MessageQueue = {
        key,
        lane: laneKey(job),
        jobs: [job],
        due: job.notBefore,
        ready: false,
        running: false,
        heldUntil: 0,
      };
      queues.set(key, created);
      if (job.notBefore <= now()) makeReady(created);
      else {
        schedule(created, job.notBefore);
        // A retry owed since before a restart waits for its receiver as the others do.
        if (job.attempt > 0) waitForRetry(created);
      }
    },
    canRemove(job) {
      const q = queues.get(callbackOrderKey(job));
      return !(q?.running && q.jobs[0]?.eventId === job.eventId);
    },
    remove(job) {
      const q = queues.get(callbackOrderKey(job));
      const at = q ? q.jobs.findIndex((j) => j.eventId === job.eventId) : -1;
      if (!q || at < 0 || (q.running && at === 0)) return;
      q.jobs.splice(at, 1);
      jobs--;
      // Its entry in the due heap or a lane's ready list is skipped as stale.
      if (q.jobs.length === 0) {
        queues.delete(q.key);
        stopRetrying(q);
      }
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

/** A job's lane: its application's receiver for its kind of callback. */
const laneKey = (job: Pick<CallbackJob, 'applicationId' | 'kind'>): string => `${job.applicationId}\u0000${job.kind}`;
