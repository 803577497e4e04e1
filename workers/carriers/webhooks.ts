import type { CarrierReport } from '../carrier';
import { mmsWebhook } from './mms/mms-webhook';
import { rcsWebhook } from './rcs/rcs-webhook';
import { whatsAppWebhook } from './whatsapp/whatsapp-webhook';

export type WebhookHeaders = Record<string, string | string[] | undefined>;

/**
 * What the gateway needs to take a carrier's delivery-report webhook: check
 * its signature over the raw body, then turn the parsed JSON into reports.
 * `verify` rejects a missing, repeated or garbled signature header and an
 * empty secret; `parse` never throws and skips what it does not know.
 */
export interface WebhookHandler {
  verify(rawBody: Buffer, headers: WebhookHeaders, secret: string): boolean;
  parse(body: unknown): CarrierReport[];
}

export type WebhookChannel = 'wab' | 'rcs' | 'mms';

export const CARRIER_WEBHOOKS: Readonly<Record<WebhookChannel, WebhookHandler>> = Object.freeze({
  wab: whatsAppWebhook,
  rcs: rcsWebhook,
  mms: mmsWebhook,
});
