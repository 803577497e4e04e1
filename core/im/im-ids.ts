import { hashedUuid, uuid } from '../../lib/uuid';
import { isImAttemptId } from '../domain/im-attempt-id';

export { isImAttemptId };

/**
 * Intelligent Messaging ids. A message gets a random version-4 UUID whose last
 * hex digit is 0; its delivery attempt k (0..9) gets the same UUID with version
 * 8 and last digit k+1. So a status report for an attempt names its message
 * and its place in the sequence without a lookup, and a restart re-derives
 * every attempt's id.
 */
export function newImMessageId(): string {
  return retyped(uuid(), '4', '0');
}

/** The id of an IM message sent with an Idempotency-Key (`dedup_key` in im.proto): the same for the same key and request. */
export function keyedImMessageId(applicationId: string, dedupKey: string): string {
  return retyped(hashedUuid(applicationId, 'im', dedupKey), '4', '0');
}

/** Delivery attempts an IM message may have: its attempt ids' last digit is 1..9 or a. */
export const MAX_IM_ATTEMPTS = 10;

export function imAttemptId(messageId: string, attempt: number): string {
  if (attempt < 0 || attempt >= MAX_IM_ATTEMPTS) throw new RangeError(`attempt must be 0..${MAX_IM_ATTEMPTS - 1}`);
  return retyped(messageId, '8', (attempt + 1).toString(16));
}

/** The message and the attempt index of an attempt id. */
export function parseImAttemptId(id: string): { messageId: string; attempt: number } {
  return { messageId: retyped(id, '4', '0'), attempt: parseInt(id[35]!, 16) - 1 };
}

/**
 * `id` with its version digit and its last digit replaced, as a flat string
 * (slices and concatenations would keep a rope and the string sliced).
 */
function retyped(id: string, version: string, last: string): string {
  const text = Buffer.from(id, 'latin1');
  text[14] = version.charCodeAt(0);
  text[35] = last.charCodeAt(0);
  return text.toString('latin1');
}
