import { handsetKey } from '../domain/handset-key';

/** One callback to deliver; `eventId` stays the same across every retry of it. */
export interface CallbackJob {
  eventId: string;
  applicationId: string;
  /** status and reply: SMS Gateway v2; im_status: Intelligent Messaging. */
  kind: 'status' | 'reply' | 'im_status';
  messageId: string;
  body: Record<string, unknown>;
  /** When the event happened. */
  createdAt: number;
  /** When it was first tried (set by that try): its retries stop `retryFor` after this or after the event, whichever is later. */
  firstTriedAt?: number;
  attempt: number;
  /** Not to be tried before this time (epoch ms). */
  notBefore: number;
  /** The W3C traceparent of the span whose change made it, while tracing is on. */
  trace?: string;
}

/**
 * The callbacks that go one after another, each waiting behind the one before (a failed one's retries
 * included): a message's own, in the order of its changes; and a handset's replies to one application,
 * however its number was written: every reply is a message of its own, and a conversation told out of
 * order after a receiver's outage reads wrong. Also the bus key, so they stay in one partition.
 */
export function callbackOrderKey(job: Pick<CallbackJob, 'kind' | 'applicationId' | 'messageId' | 'body'>): string {
  if (job.kind !== 'reply' || typeof job.body.source !== 'string') return job.messageId;
  return `reply\n${job.applicationId}\n${handsetKey(job.body.source)}`;
}

export const encodeCallback = (job: CallbackJob): Buffer => Buffer.from(JSON.stringify(job));
export const decodeCallback = (value: Buffer): CallbackJob => JSON.parse(value.toString('utf8')) as CallbackJob;

/** Exponential backoff with jitter: 1 s, 2 s, 4 s … up to an hour between tries. */
export function retryDelayMs(attempt: number): number {
  const base = Math.min(3_600_000, 1000 * 2 ** Math.min(attempt, 22));
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

/**
 * When a callback whose try just failed is tried next: after its back-off,
 * but never past the end of its window, `retryForMs` from its first try (or
 * from the event, if later), so the last try is made at the window's end;
 * undefined once the window is over (given up). The window starts at the first
 * try, not at the event, because a message's later callbacks wait behind its
 * earlier one: counted from their events, they would have spent their window
 * waiting when the first gives up, and a final status would get one try.
 */
export function nextTryAt(
  job: Pick<CallbackJob, 'createdAt' | 'firstTriedAt' | 'attempt'>,
  retryForMs: number,
  now = Date.now(),
  retryAfterSeconds?: number,
): number | undefined {
  const end = retryWindowEnd(job, retryForMs, now);
  if (now >= end) return undefined;
  // A receiver's Retry-After (on a 429 or 503) is waited for, if the back-off is shorter.
  return Math.min(now + Math.max(retryDelayMs(job.attempt), (retryAfterSeconds ?? 0) * 1000), end);
}

/** The end of a callback's retry window; `now` stands in for a first try not yet made. */
export function retryWindowEnd(job: Pick<CallbackJob, 'createdAt' | 'firstTriedAt'>, retryForMs: number, now = Date.now()): number {
  return Math.max(job.createdAt, job.firstTriedAt ?? now) + retryForMs;
}
