/**
 * Handsets that opted out of (or back into) an application's messages: the
 * durable record behind hot state's opt-out set. Times are epoch milliseconds.
 */
interface OptOutRecord {
  applicationId: string;
  handset: string;
  optedOut: boolean;
  at: number;
}

export interface OptOutStore {
  recordOptOuts(entries: readonly OptOutRecord[]): Promise<void>;
  /** Handsets currently opted out, of one application or of all. */
  listOptOuts(applicationId?: string): Promise<OptOutRecord[]>;
}
