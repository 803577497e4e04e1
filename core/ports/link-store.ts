/**
 * Short links put into outgoing messages, and the clicks on them. Times are
 * epoch milliseconds.
 */
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

export interface LinkStore {
  insertShortLinks(links: readonly ShortLinkRecord[]): Promise<void>;
  getShortLink(code: string): Promise<ShortLinkRecord | undefined>;
  recordLinkClicks(clicks: readonly LinkClick[]): Promise<void>;
  countLinkClicks(code: string): Promise<number>;
}
