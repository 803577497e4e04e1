import type { AccountStore } from './account-store';
import type { BlockListStore } from './block-list-store';
import type { CampaignStore } from './campaign-store';
import type { ImStore } from './im-store';
import type { LinkStore } from './link-store';
import type { MessageHistory } from './message-history';
import type { OptOutStore } from './opt-out-store';

/** A cheap round trip to the history engine, for health checks. */
export interface HistoryHealth {
  ping(): Promise<void>;
  /** When the engine last answered a call (ms since the epoch; 0 before any): busy is told from down by it. */
  answeredAt?(): number;
  /** Bytes of memory the engine tracks as in use (ClickHouse's MemoryTracking: chDB's inside core, or a server's whole). */
  engineMemoryBytes(): Promise<number>;
}

/**
 * History: every store kept in the one ClickHouse engine (chDB embedded), as
 * the composition root opens and closes it. Everything else depends on the
 * one port it uses (message-history.ts, account-store.ts, opt-out-store.ts,
 * block-list-store.ts, link-store.ts, campaign-store.ts, im-store.ts).
 */
export interface History extends MessageHistory, AccountStore, OptOutStore, BlockListStore, LinkStore, HistoryHealth {
  /** Lists, campaigns, members, templates and reports, in the same engine. */
  readonly campaigns: CampaignStore;
  /** Intelligent Messaging templates, contacts and unsettled messages. */
  readonly im: ImStore;
  /** Makes every write acknowledged so far visible to reads (a journal flushes; others have nothing to do). */
  flush(): Promise<void>;
  close(): Promise<void>;
}
