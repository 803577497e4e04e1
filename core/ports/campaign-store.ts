/**
 * The Campaign Manager part of history: lists, campaigns, their members and
 * templates, and the campaign report. Members are written in bulk (one insert
 * per many thousand) and read in pages by position, so a million-member list
 * never has to be held in memory at once. Times are epoch milliseconds.
 */
export interface MemberRow {
  /** Zero-based position in the list or campaign, as accepted. */
  position: number;
  destination: string;
  /** param1..param6; '' is an absent parameter. */
  params: readonly string[];
  /** The handset had opted out of the application when it was imported. */
  optedOut: boolean;
}

export interface ListRecord {
  id: number;
  applicationId: string;
  name: string;
  batch: string;
  email: string;
  removeOptOuts: boolean;
  memberCount: number;
  createdAt: number;
  deleted: boolean;
  updatedAt: number;
}

/**
 * scheduled → sending → sent as the fan-out goes; an operator's pause makes it
 * `paused` (resume: back to scheduled or sending), a cancel `cancelling` until
 * every member without a message has one that ended `dead`, then `cancelled`.
 */
export type CampaignState = 'scheduled' | 'sending' | 'sent' | 'paused' | 'cancelling' | 'cancelled';

export interface CampaignRecord {
  id: number;
  applicationId: string;
  name: string;
  batch: string;
  email: string;
  scheduleAt: number;
  /** The UTC offset the schedule was written with: the report's dates use it. */
  utcOffsetMinutes: number;
  /** The message text with its placeholders (from `content` or the template). */
  content: string;
  template: string;
  mask: string;
  optOutResponse: string;
  replyResponse: string;
  removeOptOuts: boolean;
  /** Members as imported (after duplicates), positions 0..memberCount-1, including those removed as opted out. */
  memberCount: number;
  /** Of `memberCount`, those left out at import because they had opted out (remove_opt_outs): the campaign never sends to them. */
  removedOptOuts: number;
  /** Numeric message id of member 0; see campaign-message-ids.ts. */
  numericBase: number;
  state: CampaignState;
  createdAt: number;
  updatedAt: number;
}

export interface TemplateRecord {
  id: number;
  applicationId: string;
  name: string;
  content: string;
  updatedAt: number;
}

export interface ReportRecord {
  position: number;
  messageNumericId: number;
  mobile: string;
  /** When the message went to the carrier; 0 when it has not yet. */
  sentAt: number;
  status: string;
  statusAt: number;
}

/** What a report's JSON writes the same on every row: the campaign's name and the UTC offset its dates are in. */
export interface ReportJsonLook {
  listName: string;
  utcOffsetMinutes: number;
}

/**
 * A list or campaign created by a request with an Idempotency-Key, and the
 * answer it got: a retry of the same request (the same `dedupKey`) whose first
 * answer was lost is answered with it instead of creating another.
 */
export interface KeyedImport {
  applicationId: string;
  dedupKey: string;
  kind: 'list' | 'campaign';
  /** The list or campaign id. */
  id: number;
  errorMessages: string;
  members: number;
  optedOut: number;
  at: number;
}

/** A campaign's messages counted by their latest status (campaign control's progress). */
export interface CampaignProgressCounts {
  /** Messages stored (members that have one). */
  messages: number;
  /** Messages that reached a carrier connection and did not end `dead`. */
  handed: number;
  delivered: number;
  /** rejected, failed, expired or frozen. */
  failed: number;
  blocked: number;
  /** Over the application's quota: never sent (as the report's `deficient`). */
  deficient: number;
  dead: number;
  /** accepted or queued: not yet handed to a carrier, not ended. */
  waiting: number;
  /** Of `handed`, those first handed to the carrier at or after `since`. */
  handedSince: number;
}

export interface CampaignStore {
  insertMembers(ownerId: number, members: readonly MemberRow[]): Promise<void>;
  /** Removes the members of an import that never committed. */
  deleteMembers(ownerId: number): Promise<void>;
  /** Up to `limit` members from `fromPosition` on, in position order. */
  readMembers(ownerId: number, fromPosition: number, limit: number): Promise<MemberRow[]>;
  upsertList(list: ListRecord): Promise<void>;
  /** Remembers a keyed import's answer; written before its list or campaign row. */
  rememberKeyedImport(keyed: KeyedImport): Promise<void>;
  /**
   * The import an earlier request with this key made, if its list or
   * campaign row was written (deleted since or not): one remembered whose row
   * a crash kept from being written is not found.
   */
  findKeyedImport(applicationId: string, dedupKey: string): Promise<KeyedImport | undefined>;
  /** The application's lists that are not deleted, oldest first. */
  listLists(applicationId: string): Promise<ListRecord[]>;
  upsertCampaign(campaign: CampaignRecord): Promise<void>;
  getCampaign(applicationId: string, id: number): Promise<CampaignRecord | undefined>;
  /** A campaign whatever its application: for core's own use (replies to campaign messages). */
  findCampaign(id: number): Promise<CampaignRecord | undefined>;
  /** Campaigns not yet wholly handed to their channel, of every application. */
  listUnsentCampaigns(): Promise<CampaignRecord[]>;
  /** The highest numeric message id any campaign has reserved (0 if none). */
  maxReservedNumericId(): Promise<number>;
  upsertTemplate(template: TemplateRecord): Promise<void>;
  listTemplates(applicationId: string): Promise<TemplateRecord[]>;
  /** Ids of stored messages in [lo, hi) (campaign message ids sort by position). */
  messageIdsInRange(lo: string, hi: string): Promise<Set<string>>;
  /** Campaigns of one application ('' : of every application), newest first. */
  listCampaigns(applicationId: string): Promise<CampaignRecord[]>;
  /** The campaign messages with ids in [lo, hi) counted by latest status; `since` (epoch ms) bounds `handedSince`. */
  progressRange(lo: string, hi: string, since: number): Promise<CampaignProgressCounts>;
  /** Report rows of campaign messages with ids in [lo, hi), in id (= position) order. */
  reportRange(lo: string, hi: string): Promise<ReportRecord[]>;
  /**
   * The same rows as reportRange, in batches as the engine produces them: a
   * report of any size holds one batch at a time. Ending the iteration early
   * stops the read.
   */
  reportRows(lo: string, hi: string): AsyncIterable<ReportRecord[]>;
  /**
   * The same rows as the Campaign Manager interface answers them, formatted
   * by the engine: each row's JSON object, the objects joined by commas
   * (without the array's brackets), as bytes in chunks of any size as the
   * engine produces them; a chunk may end inside a row or a character. Ending
   * the iteration early stops the read.
   */
  reportJson(lo: string, hi: string, look: ReportJsonLook): AsyncIterable<Uint8Array>;
}
