import type { MessageStatus } from '../core/domain/message-status';
import type { OutboundJob } from '../core/ports/bus-payloads';
import { HermodError } from '../lib/errors';

/**
 * What a channel worker needs from a carrier: send, and tell about delivery
 * reports and inbound messages. Each carrier folder (SMPP, SMTP, HTTP APIs)
 * implements it and turns its own failures into HermodError with a retryable
 * flag before anything above sees them.
 */
export interface CarrierReport {
  carrierId: string;
  /** The carrier id as an earlier version kept it (as the carrier wrote it), when that differs: what its messages are found by. */
  carrierIdAsWritten?: string;
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
   * `handover.holdBack`, where the carrier queues messages before writing them, is asked right
   * before the first part leaves: true withdraws the message unsent, rejected with heldBackError.
   */
  send(job: OutboundJob, onWritten?: () => void, handover?: Handover): Promise<{ carrierIds: string[]; detail?: string }>;
  /**
   * Asks the carrier what became of a message it took (SMPP query_sm), by the carrier ids its submit gave:
   * a report for each whose outcome is final; none for those still on their way (their receipts will come)
   * or unknown to the carrier. Rejects when the carrier cannot be asked now (not bound, no answer).
   */
  query?(job: OutboundJob, carrierIds: readonly string[]): Promise<CarrierReport[]>;
  /** Resolves when the carrier can take messages (connected and bound). */
  ready(): Promise<void>;
  /** The listener resolves once the report is safe (the carrier may then forget it) and rejects for the carrier to report it again. */
  onReport(listener: (report: CarrierReport) => void | Promise<void>): void;
  onInbound(listener: (message: InboundMessage) => void): void;
  close(): Promise<void>;
}

/** How a job comes to the carrier: handed out before, and whether to withdraw it at the last moment. */
export interface Handover {
  redelivered?: boolean;
  holdBack?: () => boolean;
}

const HELD_BACK = 'held back before it reached the carrier';

/** A message a carrier withdrew from its queue unsent, because `holdBack` said so. */
export function heldBackError(): HermodError {
  return new HermodError('unavailable', HELD_BACK, { retryable: true });
}

export function isHeldBack(err: unknown): boolean {
  return err instanceof HermodError && err.message === HELD_BACK;
}

const TAKEN = Symbol('takenCarrierIds');

/**
 * Marks a failure of a message some of whose `parts` the carrier took (a long
 * SMS one part of which was refused for good): their carrier ids, so their
 * receipts still find the message, and its message says how many it took.
 */
export function withTakenParts<E>(err: E, carrierIds: readonly string[], parts: number): E {
  if (carrierIds.length === 0 || typeof err !== 'object' || err === null) return err;
  Object.defineProperty(err, TAKEN, { value: carrierIds });
  // More than one part may have been refused: the first refusal ends the message.
  if (err instanceof Error) err.message += ` (the carrier took ${carrierIds.length} of its ${parts} parts: ${carrierIds.join(', ')})`;
  return err;
}

/** The carrier ids of the parts taken before `err` failed the message (see withTakenParts); none if not so marked. */
export function takenParts(err: unknown): readonly string[] {
  return (typeof err === 'object' && err !== null && (err as { [TAKEN]?: readonly string[] })[TAKEN]) || [];
}

const TAKEN_ROUTE = Symbol('takenPartsRoute');

/**
 * Marks a failure marked withTakenParts with the route its taken parts went by (`route … → carrier …`, as a
 * `submitted` names it): the carrier that knows the segments does not know the route, the routed carrier does.
 */
export function withTakenPartsRoute<E>(err: E, route: string): E {
  if (takenParts(err).length > 0) Object.defineProperty(err, TAKEN_ROUTE, { value: route });
  return err;
}

/** The route the taken parts of a failure went by (see withTakenPartsRoute); '' if not so marked. */
export function takenPartsRoute(err: unknown): string {
  return (typeof err === 'object' && err !== null && (err as { [TAKEN_ROUTE]?: string })[TAKEN_ROUTE]) || '';
}
