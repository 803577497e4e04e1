import type { MessageStatus } from '../domain/message-status';

/**
 * Message history: the durable record of every message and every status
 * change, kept in ClickHouse (chDB embedded). Writes come in batches; a write
 * has happened when its promise resolves. Times are epoch milliseconds.
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
  /** Handed over again after its carrier refused it for a while: since when (ms). Not stored: it lives with the schedule. */
  deferredSince?: number;
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

/** A message with the carrier and no final report yet, and the carrier ids its submits got. */
export interface AwaitingReceipt extends StoredMessage {
  carrierIds: string[];
}

export interface MessageHistory {
  /** Stores messages together with their first events (usually `accepted`). */
  insertMessages(messages: readonly MessageRecord[], events: readonly StatusEvent[]): Promise<void>;
  appendEvents(events: readonly StatusEvent[]): Promise<void>;
  /** The message with its latest status, only if it belongs to the application. */
  getMessage(applicationId: string, id: string): Promise<StoredMessage | undefined>;
  getMessageByNumericId(applicationId: string, numericId: number): Promise<StoredMessage | undefined>;
  /** A message whatever its application: for core's own use (callbacks), never for an API answer. */
  findMessage(id: string): Promise<StoredMessage | undefined>;
  /** As findMessage, by the numeric id Gateway v1 and Campaign Manager clients know (unique across applications). */
  findMessageByNumericId(numericId: number): Promise<StoredMessage | undefined>;
  /**
   * The messages among `ids` that history holds, whatever their application,
   * in no particular order and without their status: one query for a batch of
   * lookups (core's callbacks for messages no longer in memory).
   */
  findMessages(ids: readonly string[]): Promise<MessageRecord[]>;
  /**
   * Messages whose latest status is before `sent` is confirmed by the carrier
   * (accepted, queued or sent), oldest first, for re-publication after a restart.
   * Pages by acceptance order: pass the last returned message to get the next page.
   * `acceptedBefore` (ms): only messages accepted before then (those of the
   * processes before this start, not the ones it has taken since).
   */
  listUnfinished(limit: number, after?: { acceptedAt: number; id: string }, acceptedBefore?: number): Promise<StoredMessage[]>;
  /**
   * SMS messages whose latest status is `submitted` (with the carrier, no final report yet), with the carrier ids
   * their submits got (every part's), paged as listUnfinished: those whose receipts a Redis bus back empty may
   * have taken with it, for the carrier to be asked about.
   */
  listAwaitingReceipt(limit: number, after?: { acceptedAt: number; id: string }, acceptedBefore?: number): Promise<AwaitingReceipt[]>;
  /** The message of each carrier id history has an event with (carrier id → message id); '' is never found. */
  findMessageIdsByCarrierIds(carrierIds: readonly string[]): Promise<Map<string, string>>;
  /** The latest status of each of these messages that has one (id → status and when): one query for a batch. */
  latestStatuses(ids: readonly string[]): Promise<Map<string, { status: MessageStatus; at: number }>>;
  /**
   * The latest messages (at most 50, newest first) sent to a handset since `since`, whatever their
   * application; `handsets` are the ways its number may be written. What a reply is routed by when hot
   * state no longer knows the handset (a restart of in-process state, a reply after its time to live).
   * Only messages that went to it, as hot state remembers them as they go to their channel: one scheduled
   * after `now`, or screened out (`blocked`, `deficient`), never did.
   */
  lastSendsTo(handsets: readonly string[], since: number, now: number): Promise<SendToHandset[]>;
  /**
   * Each source (and mask) applications sent messages from at or after `since`, with the latest time
   * each: what in-process hot state learns again at a start, for reply routing.
   */
  sendersSince(since: number): Promise<SenderOfAddress[]>;
  /**
   * How many of the application's messages accepted at or after `since` took from its quota: outgoing (MT), neither
   * blocked nor over the quota (`deficient`), and not an Intelligent Messaging attempt (its message counts once) or
   * the confirmation an opted-out handset gets. What a new quota counter starts from.
   */
  countQuotaUse(applicationId: string, since: number): Promise<number>;
  /**
   * Messages whose ids a client's Idempotency-Key made (hashedUuid's layout), accepted at or after `since`,
   * at most `limit`, newest first: what a core that starts again loads, so a retry of a send whose answer its
   * crash lost finds the stored message without a query each. May hold a few other messages (ids that look so).
   */
  keyedMessagesSince(since: number, limit: number): Promise<KeyedMessage[]>;
  /** Every status event of a message whatever its application, oldest first: for the admin API, never for an application's. */
  listEvents(id: string): Promise<StatusEvent[]>;
  /**
   * How an application's message reached its carrier: the detail of its latest `submitted` event (`route … → carrier …`);
   * for a long message refused after its carrier took some parts, the route those parts went by and their carrier ids;
   * undefined before.
   */
  getMessageRoute(applicationId: string, id: string): Promise<MessageRoute | undefined>;
}

/** A message stored under an id an Idempotency-Key made: what answers its retry. */
export type KeyedMessage = Pick<MessageRecord, 'id' | 'numericId' | 'applicationId'>;

export interface SenderOfAddress {
  source: string;
  mask: string;
  applicationId: string;
  at: number;
}

export interface SendToHandset {
  messageId: string;
  applicationId: string;
  source: string;
  mask: string;
  acceptedAt: number;
}

export interface MessageRoute {
  /** e.g. `route nz-mobile → carrier one-nz (failover from spark)`. */
  route: string;
  /** The carrier id of its first part; '' when it was never submitted whole (takenPartCarrierIds). */
  carrierId: string;
  at: number;
  /** A long message refused after its carrier took some of its parts: their carrier ids. */
  takenPartCarrierIds?: string[];
}
