import type { MessageStatus } from '../domain/message-status';

/** Statuses of the Intelligent Messaging vocabulary (SPEC.md §2.4 StatusCallback). */
export const IM_STATUSES = ['accepted', 'submitted', 'sent', 'received', 'read', 'frozen', 'rejected', 'failed', 'dead', 'expired'] as const;
export type ImStatus = (typeof IM_STATUSES)[number];

/**
 * One thing an application hears about an Intelligent Messaging message: a
 * change of the message as a whole (`accepted`, then its outcome), or the
 * progress of one of its delivery attempts on that attempt's channel.
 */
export interface ImStatusNotice {
  applicationId: string;
  messageId: string;
  status: ImStatus;
  /** The caller's reference: the callback's `detail` (SPEC.md §6.1). */
  reference: string;
  at: number;
  /** The attempt it is about (1-based, in request order) and its channel; absent: the message as a whole. */
  attempt?: { number: number; channel: string };
  /** Why an attempt or the message did not succeed, when hermod knows. */
  reason?: string;
}

/** hermod's statuses in the IM vocabulary: opt-outs and quotas are refusals; `queued` is not told. */
export function toImStatus(status: MessageStatus): ImStatus | undefined {
  if (status === 'blocked' || status === 'deficient') return 'rejected';
  return (IM_STATUSES as readonly string[]).includes(status) ? (status as ImStatus) : undefined;
}

/**
 * The StatusCallback body: the spec's `id`, `status` and `detail`, plus
 * `channel` and `attempt` on an attempt's progress and `reason` on a failure
 * (extra fields a receiver that only knows the spec's three can ignore).
 */
export function imCallbackBody(n: ImStatusNotice): Record<string, unknown> {
  return {
    id: n.messageId,
    status: n.status,
    detail: clip(n.reference),
    ...(n.attempt ? { channel: n.attempt.channel, attempt: n.attempt.number } : {}),
    ...(n.reason ? { reason: clip(n.reason) } : {}),
  };
}

/** At most 255 characters (code points, as the spec's maxLength counts them), never half of one. */
function clip(text: string): string {
  if (text.length <= 255) return text;
  return Array.from(text).slice(0, 255).join('');
}
