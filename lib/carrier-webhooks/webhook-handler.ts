export type WebhookHeaders = Record<string, string | string[] | undefined>;

/** The statuses a carrier's delivery report can tell; each is one of core's message statuses (checked in carrier-webhooks.test.ts). */
export type ReportedStatus = 'sent' | 'received' | 'read' | 'failed' | 'expired';

/** One delivery report from a webhook body: the carrier's id of the message, its new status, when, and the carrier's error code ('' when none). */
export interface WebhookReport {
  carrierId: string;
  status: ReportedStatus;
  at: number;
  errorCode: string;
  /** What the carrier said of a failure, in words, its code first ('131026: Message undeliverable'); '' when it said nothing. */
  detail?: string;
}

/** One message from a handset in a webhook body (an MO): who sent it, to which business address, what it says, when, and the carrier's id of it. */
export interface WebhookInbound {
  /** The handset, E.164 with its plus. */
  source: string;
  /** The business address written to, E.164 with its plus. */
  destination: string;
  text: string;
  at: number;
  /** The carrier's id of the message, which a redelivery repeats. */
  carrierRef: string;
  /** The carrier's id of the business address (WhatsApp: the phone number id); '' when none. */
  businessId: string;
  /** The carrier's id of the message it replies to (WhatsApp: `context.id`, when the handset swiped to reply to one); '' when none. */
  quotedRef: string;
}

/**
 * What the gateway needs to take a carrier's delivery-report webhook: check
 * its signature over the raw body, then turn the parsed JSON into reports.
 * `verify` rejects a missing, repeated or garbled signature header and an
 * empty secret; `parse` never throws and skips what it does not know.
 */
export interface WebhookHandler {
  verify(rawBody: Buffer, headers: WebhookHeaders, secret: string): boolean;
  parse(body: unknown): WebhookReport[];
  /** Messages from handsets in the body, for carriers that post them; never throws and skips what it does not know. */
  inbound?(body: unknown): WebhookInbound[];
  /**
   * A carrier's unsigned check that the webhook is ours (RBM's client-token
   * verification): when `body` is one, the body to answer 200 with if it
   * names `secret`, or why it is refused; undefined when `body` is no such
   * check (and the request goes on to `verify`).
   */
  handshake?(body: unknown, secret: string): HandshakeAnswer | undefined;
}

/** A carrier's verification answered (`answer`, with 200) or refused (`refused`: why, for whoever sets the webhook up). */
export type HandshakeAnswer = { answer: string } | { refused: string };
