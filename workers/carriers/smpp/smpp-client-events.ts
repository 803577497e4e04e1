import type { DeliveryReceipt } from './delivery-receipt';
import type { MoMessage } from './mo-assembler';

export interface BoundEvent {
  /** The SMSC's system_id from bind_transceiver_resp. */
  systemId: string;
}

export interface DisconnectedEvent {
  reason: string;
  /** Requests in flight or queued (submit_sm, query_sm) that were rejected because of it. */
  failed: number;
  /** hermod closed the bind on purpose (a stop), and nothing failed on the way. */
  closed: boolean;
}

export interface BindFailedEvent {
  reason: string;
  /** command_status of a refused bind; undefined when the connection failed. */
  status?: number;
}

export interface SlowAnswerEvent {
  /** Submits past the submit timeout whose answer is still waited for (up to the answer wait). */
  waiting: number;
  /** The submit timeout they passed. */
  waitingMs: number;
}

export type SmppClientEvents = {
  bound: [BoundEvent];
  disconnected: [DisconnectedEvent];
  bindFailed: [BindFailedEvent];
  /** `settle(true)` once the receipt is safe with the listener (deliver_sm_resp OK), `settle(false)` for the SMSC to send it again. */
  receipt: [DeliveryReceipt, (handled: boolean) => void];
  mo: [MoMessage];
  slowAnswer: [SlowAnswerEvent];
};
