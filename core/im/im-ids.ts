import { randomUUID } from 'node:crypto';
import { isCampaignMessageId } from '../campaigns/campaign-message-ids';

/**
 * Intelligent Messaging ids. A message gets a random version-4 UUID whose last
 * hex digit is 0; its delivery attempt k (0..9) gets the same UUID with version
 * 8 and last digit k+1. So a status report for an attempt names its message
 * and its place in the sequence without a lookup, and a restart re-derives
 * every attempt's id.
 */
export function newImMessageId(): string {
  return randomUUID().slice(0, -1) + '0';
}

export function imAttemptId(messageId: string, attempt: number): string {
  if (attempt < 0 || attempt > 9) throw new RangeError('attempt must be 0..9');
  return `${messageId.slice(0, 14)}8${messageId.slice(15, -1)}${(attempt + 1).toString(16)}`;
}

export function isImAttemptId(id: string): boolean {
  return id.length === 36 && id[14] === '8' && id[35] !== '0' && !isCampaignMessageId(id);
}

/** The message and the attempt index of an attempt id. */
export function parseImAttemptId(id: string): { messageId: string; attempt: number } {
  return { messageId: `${id.slice(0, 14)}4${id.slice(15, -1)}0`, attempt: parseInt(id[35]!, 16) - 1 };
}
