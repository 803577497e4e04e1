import type { MessageStatus } from '../domain/message-status';

/**
 * What travels on the bus. JSON keeps the payloads readable with any Kafka or
 * Redis tool; they are small, so its cost is minor next to the carrier hop.
 */
export interface OutboundJob {
  id: string;
  applicationId: string;
  channel: string;
  destination: string;
  source: string;
  content: string;
  acceptedAt: number;
  /** Intelligent Messaging: the kind of message, and its media or template (content holds the text). */
  im?: ImJobDetails;
}

export interface ImJobDetails {
  type: 'text' | 'media' | 'template';
  media?: { mimeType: string; url: string };
  /** The carrier-side template: name and language as the carrier knows them, named parameters. */
  template?: { id: string; name: string; language: string; parameters: { name: string; text: string }[] };
  /** E-mail subject. */
  subject?: string;
  /** The caller's reference, for carriers that carry one. */
  reference?: string;
}

/** A status change reported by a worker. `id` may be empty when only the carrier id is known. */
export interface StatusUpdate {
  id: string;
  status: MessageStatus;
  at: number;
  carrierId?: string;
  errorCode?: string;
  detail?: string;
  channel: string;
}

export const encodeJob = (job: OutboundJob): Buffer => Buffer.from(JSON.stringify(job));
export const decodeJob = (value: Buffer): OutboundJob => JSON.parse(value.toString('utf8')) as OutboundJob;
export const encodeStatus = (update: StatusUpdate): Buffer => Buffer.from(JSON.stringify(update));
export const decodeStatus = (value: Buffer): StatusUpdate => JSON.parse(value.toString('utf8')) as StatusUpdate;

/** A message from a handset (MO), as the carrier delivered it. */
export interface InboundPayload {
  source: string;
  destination: string;
  text: string;
  at: number;
  channel: string;
  /** References a carrier repeats when it delivers the same message again; '' or absent when none. */
  carrierRef?: string;
}

export const encodeInbound = (m: InboundPayload): Buffer => Buffer.from(JSON.stringify(m));
export const decodeInbound = (value: Buffer): InboundPayload => JSON.parse(value.toString('utf8')) as InboundPayload;
