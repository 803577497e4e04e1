import type { CampaignStore } from './campaign-store';
import type { ImStore } from './im-store';
import type { MessageRecord, StatusEvent, StoredMessage } from './message-history';

export type { Direction, MessageRecord, StatusEvent, StoredMessage } from './message-history';

/**
 * History: the durable record of every message, every status change and every
 * application, kept in ClickHouse (chDB embedded). Writes come in batches;
 * a write has happened when its promise resolves. Times are epoch milliseconds.
 */
export interface ApplicationRecord {
  id: string;
  name: string;
  /** scrypt hash in the form `scrypt$N$r$p$salt$hash` (base64 parts); empty: no password. */
  passwordHash: string;
  /** sha256 hex of the API key; empty: no key. */
  apiKeyHash: string;
  /** Where status changes of its outgoing messages are posted (empty: nowhere). */
  statusCallbackUrl: string;
  /** Where replies from handsets are posted (empty: nowhere). */
  replyCallbackUrl: string;
  /** Key of the HMAC-SHA256 signature on every callback. */
  callbackSecret: string;
  /** Where status changes of its Intelligent Messaging messages are posted (empty: nowhere). */
  imStatusCallbackUrl: string;
  /** Its default Intelligent Messaging delivery attempts, e.g. `wab:read:60,sms` (empty: the service default). */
  imDefaultAttempts: string;
  /** Addresses (numbers, short codes, masks) the operator gave it: replies to them are its own. */
  sourceAddresses: readonly string[];
  /** Intelligent Messaging requests per second; -1: the service default (HERMOD_IM_RATE_LIMIT), 0: no limit. */
  imRateLimit: number;
  updatedAt: number;
}

export interface OptOutRecord {
  applicationId: string;
  handset: string;
  optedOut: boolean;
  at: number;
}

export interface ShortLinkRecord {
  code: string;
  url: string;
  messageId: string;
  applicationId: string;
  createdAt: number;
}

export interface LinkClick {
  code: string;
  at: number;
  userAgent: string;
  ip: string;
}

export interface History {
  /** Stores messages together with their first events (usually `accepted`). */
  insertMessages(messages: readonly MessageRecord[], events: readonly StatusEvent[]): Promise<void>;
  appendEvents(events: readonly StatusEvent[]): Promise<void>;
  /**
   * The same as insertMessages for rows already encoded as JSONEachRow lines
   * (rows.ts messageRow / eventRow): a journal keeps its rows in that form, so
   * flushing them costs no second encoding.
   */
  insertEncoded(messageRows: string, eventRows: string): Promise<void>;
  /** The message with its latest status, only if it belongs to the application. */
  getMessage(applicationId: string, id: string): Promise<StoredMessage | undefined>;
  getMessageByNumericId(applicationId: string, numericId: number): Promise<StoredMessage | undefined>;
  /** A message whatever its application: for core's own use (callbacks), never for an API answer. */
  findMessage(id: string): Promise<StoredMessage | undefined>;
  /**
   * Messages whose latest status is before `sent` is confirmed by the carrier
   * (accepted, queued or sent), oldest first, for re-publication after a restart.
   * Pages by acceptance order: pass the last returned message to get the next page.
   */
  listUnfinished(limit: number, after?: { acceptedAt: number; id: string }): Promise<StoredMessage[]>;
  findMessageIdByCarrierId(carrierId: string): Promise<string | undefined>;
  upsertApplication(app: ApplicationRecord): Promise<void>;
  getApplicationByName(name: string): Promise<ApplicationRecord | undefined>;
  listApplications(): Promise<ApplicationRecord[]>;
  recordOptOuts(entries: readonly OptOutRecord[]): Promise<void>;
  insertShortLinks(links: readonly ShortLinkRecord[]): Promise<void>;
  getShortLink(code: string): Promise<ShortLinkRecord | undefined>;
  recordLinkClicks(clicks: readonly LinkClick[]): Promise<void>;
  countLinkClicks(code: string): Promise<number>;
  /** Handsets currently opted out, of one application or of all. */
  listOptOuts(applicationId?: string): Promise<OptOutRecord[]>;
  getApplicationByApiKeyHash(hash: string): Promise<ApplicationRecord | undefined>;
  /** Lists, campaigns, members, templates and reports, in the same engine. */
  readonly campaigns: CampaignStore;
  /** Intelligent Messaging templates, contacts and unsettled messages. */
  readonly im: ImStore;
  /** Makes every write acknowledged so far visible to reads (a journal flushes; others have nothing to do). */
  flush(): Promise<void>;
  /** Cheap round trip used by health checks. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
