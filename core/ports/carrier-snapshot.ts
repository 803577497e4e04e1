/**
 * What a channel worker reports about each carrier bind it holds, every
 * second, into hot state; core reads them for the operator console.
 */
export interface CarrierSnapshot {
  /** The channel's pool: sms, email, wab, rcs, mms. */
  channel: string;
  /** Which bind, e.g. `hermod@smsc.example:2775`. */
  bind: string;
  up: boolean;
  windowInUse: number;
  windowSize: number;
  /** Accepted submits per second since the previous snapshot. */
  submitsPerSecond: number;
  /** '' when none. */
  lastError: string;
  /** Epoch ms of the last error; 0 when none. */
  lastErrorAt: number;
}

/** A snapshot as core reads it: who reported it, and when. */
export interface ReportedCarrierSnapshot extends CarrierSnapshot {
  /** The reporting process, `host:pid`. */
  reporter: string;
  reportedAt: number;
}

export interface CarrierSnapshotState {
  /** Replaces what `reporter` reported before; forgotten `ttlMs` after this write unless written again. */
  putCarrierSnapshots(reporter: string, snapshots: readonly CarrierSnapshot[], ttlMs: number): Promise<void>;
  /** Every reporter's latest snapshots that have not expired. */
  listCarrierSnapshots(): Promise<ReportedCarrierSnapshot[]>;
}
