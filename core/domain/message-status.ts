/**
 * Message statuses (SMS Gateway v2 vocabulary plus `read`) and their order.
 * A message only ever moves to a later stage; all failure states and
 * `received` share the final stage, and `read` comes after `received`. One
 * move within the final stage: `received` may become `failed`, because a
 * carrier can report a failure after its acceptance (an e-mail relay's 250,
 * then a bounce from the recipient's server).
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

/** True when moving from `current` to `next` is a step forward. */
export function canAdvance(current: MessageStatus | undefined, next: MessageStatus): boolean {
  if (current === undefined) return true;
  if (current === 'read') return false;
  if (next === 'read') return current === 'received' || stageOf(current) < 4;
  if (next === 'failed' && current === 'received') return true;
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
