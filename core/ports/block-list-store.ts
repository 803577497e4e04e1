/**
 * Operators' block lists: the durable record behind hot state's block sets.
 * `scope` is an application id, or '' for the global list; `prefix` is `+`
 * and digits (a whole number or a prefix). Times are epoch milliseconds.
 */
export interface BlockRecord {
  scope: string;
  prefix: string;
  blocked: boolean;
  at: number;
}

export interface BlockListStore {
  recordBlocks(entries: readonly BlockRecord[]): Promise<void>;
  /** Entries blocked now: of one scope ('' : the global list), or of every scope when undefined. */
  listBlocks(scope?: string): Promise<BlockRecord[]>;
}
