import { handsetKey } from '../domain/handset-key';

/** One callback to deliver; `eventId` stays the same across every retry of it. */
export interface CallbackJob {
  eventId: string;
  applicationId: string;
  /** status and reply: SMS Gateway v2; im_status: Intelligent Messaging. */
  kind: 'status' | 'reply' | 'im_status';
  messageId: string;
  body: Record<string, unknown>;
  /** When the event happened; retries stop `retryFor` after it. */
  createdAt: number;
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
