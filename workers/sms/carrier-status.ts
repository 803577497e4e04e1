/**
 * One SMS carrier as an SMS worker sees it, for operators (the console) and
 * for reports to core: binds up of binds, submits awaiting an answer, accepted
 * submits in the last whole second, and the last error with its time.
 * `failing`: binds up but throttling or past its error threshold.
 */
export interface CarrierStatus {
  carrier: string;
  binds: number;
  bindsUp: number;
  state: 'up' | 'down' | 'failing';
  windowInUse: number;
  submitsPerSecond: number;
  lastError: string;
  /** Epoch ms; 0 when there has been none. */
  lastErrorAt: number;
}
