/**
 * Message statuses (SMS Gateway v2 vocabulary plus `read`) and their order.
 * A message only ever moves to a later stage; all failure states and
 * `received` share the final stage, and `read` comes after `received`. One
 * move within the final stage: a received e-mail may become `failed`, because
 * its relay's 250 is not its delivery (a bounce from the recipient's server
 * can follow). An SMS, WhatsApp, RCS or MMS delivery report is the handset's
 * own: a failure report after it is a carrier's second, conflicting receipt,
 * and the message stays received.
 */
export const MESSAGE_STATUSES = [
  'accepted',
  'queued',
  'sent',
  'submitted',
  'received',
  'read',
  'blocked',
  'deficient',
  'frozen',
  'rejected',
  'failed',
  'dead',
  'expired',
] as const;

export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

const STAGE: Record<MessageStatus, number> = {
  accepted: 0,
  queued: 1,
  sent: 2,
  submitted: 3,
  received: 4,
  blocked: 4,
  deficient: 4,
  frozen: 4,
  rejected: 4,
  failed: 4,
  dead: 4,
  expired: 4,
  read: 5,
};

export function stageOf(status: MessageStatus): number {
  return STAGE[status];
}

/**
 * Channels whose `received` a later `failed` may follow: an e-mail's bounce, and an Intelligent Messaging message
 * whose e-mail attempt bounced (its orchestrator records that failure only for such an attempt).
 */
const FAILS_AFTER_RECEIVED: ReadonlySet<string> = new Set(['email', 'im']);

/** True when a message of `channel` that was `received` may still become `failed` (see FAILS_AFTER_RECEIVED). */
export function failsAfterReceived(channel: string | undefined): boolean {
  return channel !== undefined && FAILS_AFTER_RECEIVED.has(channel);
}

/** True when moving from `current` to `next` is a step forward, for a message of `channel` where that matters. */
export function canAdvance(current: MessageStatus | undefined, next: MessageStatus, channel?: string): boolean {
  if (current === undefined) return true;
  if (current === 'read') return false;
  if (next === 'read') return current === 'received' || stageOf(current) < 4;
  if (next === 'failed' && current === 'received') return failsAfterReceived(channel);
  return stageOf(next) > stageOf(current);
}

/** Statuses a message reaches only once its channel took it from its queue: one applied to a message at `accepted` skipped `queued`. */
export const THROUGH_QUEUE: readonly MessageStatus[] = ['sent', 'submitted', 'received', 'read'];

export function passesThroughQueue(status: MessageStatus): boolean {
  return THROUGH_QUEUE.includes(status);
}

export function isFinal(status: MessageStatus): boolean {
  return stageOf(status) >= 4;
}

export function isMessageStatus(value: string): value is MessageStatus {
  return (MESSAGE_STATUSES as readonly string[]).includes(value);
}
