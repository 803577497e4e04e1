import type { IdBase } from '../../lib/carriers-file';
import type { Logger } from '../../lib/log';
import type { ReceiptState } from '../carriers/smpp/delivery-receipt';
import type { ConcatInfo } from '../carriers/smpp/short-message';
import type { Outcome, OutcomeWeights } from './outcome-picker';
import type { BindMode, SessionStats } from './smsc-session';

export interface SmscSimulatorOptions {
  host?: string;
  /** 0 picks a free port; a restart after stop() reuses the port first bound. */
  port?: number;
  /** When given, only these may bind. */
  credentials?: { systemId: string; password: string }[];
  /**
   * The binds it knows (default all three). An SMSC of SMPP 3.3, which has no
   * bind_transceiver, answers one with generic_nack ESME_RINVCMDID.
   */
  binds?: BindMode[];
  /** Delay before a receipt is sent (default 200 ms). */
  receiptDelayMs?: number;
  /**
   * Which bind a receipt goes out on: the one its submit came in on while it
   * is bound (`submitting`, the default), or each bind of the system_id in
   * turn (`any`), as SMSCs that spread receipts over an ESME's binds do: then
   * a receipt reaches another process than the one that submitted.
   */
  receiptsOn?: 'submitting' | 'any';
  /** Relative weights; `rejected` answers submit_sm with `rejectStatus` and sends no receipt. Default: all delivered. */
  outcomes?: Partial<OutcomeWeights>;
  /** Makes outcome picks (and message ids) reproducible. */
  seed?: number;
  /**
   * How message ids are written in submit_sm_resp and in delivery receipts, as
   * the carrier it stands for writes them (a carrier's `submit_id` and
   * `receipt_id`; some write one in hex, the other in decimal). Default hex.
   */
  submitIds?: IdBase;
  receiptIds?: IdBase;
  /**
   * How the ids are written besides their base, as some carriers write them:
   * in upper case, zero-padded to a width (submit_sm_resp's, and the
   * receipts' text ids). The receipted_message_id TLV carries the id exactly
   * as submit_sm_resp gave it (SMPP 3.4 section 5.3.2.12).
   */
  idStyles?: { submit?: IdStyle; receipt?: IdStyle };
  /**
   * What a receipt's receipted_message_id TLV holds: the id as submit_sm_resp
   * gave it (`submit`, SMPP 3.4 and the default), the text's id (`receipt`, as
   * some SMSCs write it), or no TLV at all (`none`: receipts of SMPP 3.3 style,
   * the text alone, message_state left out too).
   */
  receiptIdTlv?: 'submit' | 'receipt' | 'none';
  /** What replies and receipts go out as (default deliver_sm); data_sm as some SMSCs send them, the body in message_payload. */
  deliverWith?: 'deliver_sm' | 'data_sm';
  /**
   * How many accepted submits query_sm can ask about, at most (default
   * 1,000,000): past it the oldest are forgotten (answered ESME_RQUERYFAIL).
   */
  queryableMessages?: number;
  /** More unanswered submit_sm than this on one session get ESME_RTHROTTLED. */
  maxWindow?: number;
  /** Delay of every submit_sm_resp, so a client's window fills up. */
  submitRespDelayMs?: number;
  /** command_status of a `rejected` outcome (default ESME_RSUBMITFAIL). */
  rejectStatus?: number;
  /** Submits beyond this many per second (whole simulator) get ESME_RTHROTTLED. */
  throttlePerSecond?: number;
  /** Forces a command_status for a submit (non-zero answers with it, no receipt). */
  statusFor?: (submit: SubmitView) => number | undefined;
  /** Interval of the simulator's own enquire_link to bound sessions; 0 = never (default). */
  enquireLinkMs?: number;
  /** The simulator's system_id in bind responses. */
  systemId?: string;
  /** How long it waits for deliver_sm_resp / enquire_link_resp before trying again. */
  requestTimeoutMs?: number;
  /** Wait before a receipt not acknowledged in time (or answered with an error) is sent again (default 1 s). */
  receiptRetryMs?: number;
  /**
   * Log of the receipts owed (store and forward): they survive stop() and a
   * crash, and the next start() sends them once their system_id binds.
   * Without it, pending receipts live in memory only.
   */
  storeFile?: string;
  log?: Logger;
}

/** One received submit_sm, decoded. */
export interface SubmitView {
  sessionId: number;
  systemId: string;
  sequenceNumber: number;
  source: string;
  destination: string;
  esmClass: number;
  dataCoding: number;
  registeredDelivery: number;
  /** The body as sent (UDH included); from message_payload when that was used. */
  shortMessage: Buffer;
  /** This part's text (UDH removed). */
  text: string;
  concat?: ConcatInfo;
}

export interface SimulatedSubmit extends SubmitView {
  status: number;
  /** The id given in submit_sm_resp (accepted submits only). */
  carrierMessageId?: string;
  outcome?: Outcome;
}

export interface AssembledMessage {
  source: string;
  destination: string;
  text: string;
  parts: number;
  /** The id of the first part. */
  carrierMessageId: string;
  carrierMessageIds: string[];
}

/** A delivery receipt's deliver_sm, queued on a session (on the wire within this event-loop turn). */
export interface SentReceipt {
  carrierMessageId: string;
  /** The handset the original message went to. */
  destination: string;
  state: ReceiptState;
  /** Epoch ms. */
  at: number;
}

export interface BindEvent {
  sessionId: number;
  systemId: string;
  mode: BindMode;
  status: number;
}

export type SmscSimulatorEvents = {
  submit: [SimulatedSubmit];
  message: [AssembledMessage];
  receipt: [SentReceipt];
  bind: [BindEvent];
  sessionClosed: [SessionStats];
};

/** Hex digits in upper case, and the width an id is zero-padded to. */
export interface IdStyle {
  upper?: boolean;
  width?: number;
}
