import type { MessageStatus } from '../domain/message-status';

/**
 * The records of message history: every message and every status change.
 * Apart from history.ts so that the ports built on them (im-store.ts) need
 * not import the whole History port, which imports them.
 */
export type Direction = 'MT' | 'MO';

export interface MessageRecord {
  id: string;
  /** The same message as an integer ≤ 2^53 - 1 (Gateway v1 ids). */
  numericId: number;
  applicationId: string;
  channel: string;
  direction: Direction;
  destination: string;
  source: string;
  content: string;
  reference: string;
  messageClass: string;
  mask: string;
  smsClass: number;
  /** 0 when not scheduled. */
  scheduledAt: number;
  integrationId: string;
  /** The interface that accepted it: sms_v2, gateway_v1, im_v1, campaign. */
  via: string;
  segments: number;
  acceptedAt: number;
  /** For a reply (MO): the id of the outgoing message it answers, when known. */
  replyTo: string;
  /** For a reply (MO): the rule that chose its application (reply-router.ts ReplyRule); '' otherwise. */
  replyRoute?: string;
}

export interface StatusEvent {
  messageId: string;
  applicationId: string;
  status: MessageStatus;
  at: number;
  detail: string;
  carrierId: string;
  errorCode: string;
}

export interface StoredMessage extends MessageRecord {
  status: MessageStatus;
  statusAt: number;
}
