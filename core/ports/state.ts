import type { MessageStatus } from '../domain/message-status';

/**
 * Hot state: what must be read or changed in well under a millisecond on the
 * hot path. Everything here can be rebuilt from history; nothing here is the
 * only copy of an accepted message.
 */
export interface StatusEntry {
  status: MessageStatus;
  /** Milliseconds since the epoch of the transition. */
  at: number;
}

export interface StatusAdvance {
  id: string;
  status: MessageStatus;
  at: number;
}

export interface HotState {
  /**
   * Moves each message forward to the given status unless it is already at the
   * same or a later stage (late and duplicate reports never move it back).
   * Returns, in order, whether each advance was applied.
   */
  advanceStatuses(advances: readonly StatusAdvance[]): Promise<boolean[]>;
  getStatus(id: string): Promise<StatusEntry | undefined>;
  /** Carrier message id → our message id, for delivery-report correlation. */
  putCarrierIds(pairs: readonly { carrierId: string; messageId: string }[]): Promise<void>;
  getMessageIdByCarrierId(carrierId: string): Promise<string | undefined>;
  close(): Promise<void>;
}
