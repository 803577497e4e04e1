/**
 * The applications (accounts) and their credentials, kept in history beside
 * their messages. Times are epoch milliseconds.
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
  /** The key callbackSecret replaced, signing beside it until previousCallbackSecretUntil (an operator's rotation with overlap). */
  previousCallbackSecret: string;
  /** Epoch ms; 0: the previous key signs no more. */
  previousCallbackSecretUntil: number;
  /** Where status changes of its Intelligent Messaging messages are posted (empty: nowhere). */
  imStatusCallbackUrl: string;
  /** Its default Intelligent Messaging delivery attempts, e.g. `wab:read:60,sms` (empty: the service default). */
  imDefaultAttempts: string;
  /** Addresses (numbers, short codes, masks) the operator gave it: replies to them are its own. */
  sourceAddresses: readonly string[];
  /** Intelligent Messaging requests per second; -1: the service default (HERMOD_IM_RATE_LIMIT), 0: no limit. */
  imRateLimit: number;
  /** Messages it may send per quota period; 0: no quota. */
  quotaMessages: number;
  /** The quota period: calendar hour, day or month in UTC ('' when there is no quota). */
  quotaPeriod: QuotaPeriod;
  updatedAt: number;
}

export type QuotaPeriod = '' | 'hour' | 'day' | 'month';

export interface AccountStore {
  upsertApplication(app: ApplicationRecord): Promise<void>;
  getApplicationByName(name: string): Promise<ApplicationRecord | undefined>;
  getApplicationByApiKeyHash(hash: string): Promise<ApplicationRecord | undefined>;
  listApplications(): Promise<ApplicationRecord[]>;
}
