import type { MessageStatus } from '../core/domain/message-status';
import type { OutboundJob } from '../core/ports/bus-payloads';

/**
 * What a channel worker needs from a carrier: send, and tell about delivery
 * reports and inbound messages. Each carrier folder (SMPP, SMTP, HTTP APIs)
 * implements it and turns its own failures into HermodError with a retryable
 * flag before anything above sees them.
 */
export interface CarrierReport {
  carrierId: string;
  status: MessageStatus;
  at: number;
  errorCode: string;
  /** Our message id, when the report names it itself (an e-mail bounce to its return path); else found by carrierId. */
  messageId?: string;
  /** Why, in the carrier's words (a bounce's diagnostic). */
  detail?: string;
}

export interface InboundMessage {
  source: string;
  destination: string;
  text: string;
  at: number;
  /** The carrier's references that a redelivery of the same message repeats (see MoMessage.carrierRef); '' when none. */
  carrierRef?: string;
}

export interface Carrier {
  readonly name: string;
  /**
   * Resolves when the carrier has accepted the message: the ids it gave each part, and how it was
   * routed (kept with the `submitted` event). `handover.redelivered`: the job was handed out before
   * (a worker crashed or lost it mid-send), so an earlier send may have reached the carrier.
   */
  send(job: OutboundJob, onWritten?: () => void, handover?: { redelivered: boolean }): Promise<{ carrierIds: string[]; detail?: string }>;
  /** Resolves when the carrier can take messages (connected and bound). */
  ready(): Promise<void>;
  /** The listener resolves once the report is safe (the carrier may then forget it) and rejects for the carrier to report it again. */
  onReport(listener: (report: CarrierReport) => void | Promise<void>): void;
  onInbound(listener: (message: InboundMessage) => void): void;
  close(): Promise<void>;
}
