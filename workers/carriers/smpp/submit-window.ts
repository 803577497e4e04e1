import { performance } from 'node:perf_hooks';
import type { HermodError } from '../../../lib/errors';
import { Fifo } from './fifo';

/** A timer this late means the process, not the SMSC, was slow. */
const STALLED_MS = 50;

export interface SubmitJob<R> {
  resolve(result: R): void;
  reject(err: HermodError): void;
  /** performance.now() by which the response must have arrived; set when sent. */
  deadline: number;
  /**
   * false: given up at the timeout, not waited for past it, for a request that is harmless to make again (a
   * query_sm): only a request made twice that reaches a handset twice is worth holding on to its late answer.
   */
  waitsLate?: boolean;
}

/**
 * At most `size` requests awaiting their response; callers beyond that wait
 * in FIFO order. All requests share one response timeout, so send order is
 * deadline order and a single timer (armed for the oldest) covers them all:
 * no timer per request.
 *
 * A request not answered within the timeout leaves the window (its slot goes
 * to the next one) but is still waited for, up to `answerWaitMs` from its
 * sending: an SMSC that answers late has taken it, and a request made again
 * would reach the handset twice (a slow SMSC would get a copy at every
 * timeout). Only past the answer wait does it fail, with `timeoutError`.
 */
export class SubmitWindow<J extends SubmitJob<unknown>> {
  private readonly inflight = new Map<number, J>();
  /** Requests past the timeout still waited for, in sending order (so in deadline order too). */
  private readonly late = new Map<number, J>();
  private readonly waiting = new Fifo<J>();
  private timer: NodeJS.Timeout | undefined;
  private drainWaiters: (() => void)[] = [];
  private readonly answerWaitMs: number;
  private held = false;
  /** The expiry that found this process stalled waited one turn for the answers read meanwhile. */
  private stallChecked = false;
  private readsFirst: NodeJS.Immediate | undefined;

  /**
   * @param send puts a job on the wire and returns its sequence number, or
   *   undefined when it could not be sent (it has then been settled).
   * @param onLate told when a request leaves the window unanswered and is
   *   waited for beyond it (with how many are so now).
   */
  constructor(
    readonly size: number,
    private readonly timeoutMs: number,
    private readonly send: (job: J) => number | undefined,
    private readonly timeoutError: (job: J) => HermodError,
    answerWaitMs = timeoutMs,
    private readonly onLate: (waiting: number) => void = () => undefined,
    private readonly onGivenUp: () => void = () => undefined,
  ) {
    this.answerWaitMs = Math.max(timeoutMs, answerWaitMs);
  }

  get inUse(): number {
    return this.inflight.size;
  }

  /** Requests past the timeout whose late answer is still waited for. */
  get waitingLate(): number {
    return this.late.size;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Requests sent and not yet answered, in the window or past it. */
  get unanswered(): number {
    return this.inflight.size + this.late.size;
  }

  /** While held, nothing more is sent: what is added waits in the queue until `release`. */
  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    this.pump();
  }

  /** Sends now when there is room, nobody is ahead and the window is not held, else queues. */
  add(job: J): void {
    if (!this.held && this.inflight.size < this.size && this.waiting.length === 0) this.dispatch(job);
    else this.waiting.push(job);
  }

  /** The job waiting for this sequence number's response (in the window or late), still waited for. */
  peek(sequenceNumber: number): J | undefined {
    return this.inflight.get(sequenceNumber) ?? this.late.get(sequenceNumber);
  }

  /** The job waiting for this sequence number's response (in the window or late), no longer waited for. */
  take(sequenceNumber: number): J | undefined {
    const job = this.inflight.get(sequenceNumber) ?? this.late.get(sequenceNumber);
    if (job) {
      this.inflight.delete(sequenceNumber);
      this.late.delete(sequenceNumber);
      this.checkDrained();
    }
    return job;
  }

  /** Moves waiting jobs into free slots. */
  pump(): void {
    while (!this.held && this.inflight.size < this.size && this.waiting.length > 0) this.dispatch(this.waiting.shift()!);
    this.checkDrained();
  }

  private dispatch(job: J): void {
    const seq = this.send(job);
    if (seq === undefined) return;
    job.deadline = performance.now() + this.timeoutMs;
    this.inflight.set(seq, job);
    if (!this.timer && !this.readsFirst) this.arm();
  }

  private arm(): void {
    const deadlines = [this.inflight.values().next().value?.deadline, this.late.values().next().value?.deadline].filter((d) => d !== undefined);
    if (deadlines.length === 0) return;
    this.timer = setTimeout(this.expire, Math.max(0, Math.ceil(Math.min(...deadlines) - performance.now())) + 1);
  }

  private readonly expire = (): void => {
    this.timer = undefined;
    this.readsFirst = undefined;
    let now = performance.now();
    // Fired long after its time: this process was held up (a CPU-starved core, a long GC pause), and answers that
    // came meanwhile wait unread. Timers run before the event loop reads sockets: expire once they are read.
    const due = Math.min(this.inflight.values().next().value?.deadline ?? now, this.late.values().next().value?.deadline ?? now);
    if (!this.stallChecked && now - due > STALLED_MS) {
      this.stallChecked = true;
      this.readsFirst = setImmediate(this.expire);
      return;
    }
    this.stallChecked = false;
    now = performance.now();
    let givenUp = 0;
    for (const [seq, job] of this.late) {
      if (job.deadline > now) break;
      this.late.delete(seq);
      job.reject(this.timeoutError(job));
      givenUp++;
    }
    let moved = 0;
    for (const [seq, job] of this.inflight) {
      if (job.deadline > now) break;
      this.inflight.delete(seq);
      if (this.answerWaitMs > this.timeoutMs && job.waitsLate !== false) {
        job.deadline += this.answerWaitMs - this.timeoutMs;
        this.late.set(seq, job);
        moved++;
      } else {
        job.reject(this.timeoutError(job));
        givenUp++;
      }
    }
    if (moved > 0) this.onLate(this.late.size);
    this.arm();
    this.pump();
    if (givenUp > 0) this.onGivenUp();
  };

  /** Rejects everything sent and waiting; returns how many. */
  failAll(err: HermodError): number {
    let n = 0;
    for (const job of [...this.inflight.values(), ...this.late.values()]) {
      job.reject(err);
      n++;
    }
    this.inflight.clear();
    this.late.clear();
    for (const job of this.waiting.drain()) {
      job.reject(err);
      n++;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.readsFirst) clearImmediate(this.readsFirst);
    this.readsFirst = undefined;
    this.stallChecked = false;
    this.checkDrained();
    return n;
  }

  /** Resolves when nothing is in flight, late or waiting, or after `timeoutMs`. */
  drained(timeoutMs: number): Promise<void> {
    if (this.inflight.size === 0 && this.late.size === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.drainWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private checkDrained(): void {
    if (this.drainWaiters.length === 0 || this.inflight.size > 0 || this.late.size > 0 || this.waiting.length > 0) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }
}
