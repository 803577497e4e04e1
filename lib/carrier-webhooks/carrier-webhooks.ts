import { mmsWebhook } from './mms-webhook';
import { rcsWebhook } from './rcs-webhook';
import type { WebhookHandler } from './webhook-handler';
import { whatsAppWebhook } from './whatsapp-webhook';

/**
 * Carriers' delivery-report webhooks, by channel. They sit in lib/ because
 * the gateway takes them and the carriers' tests post them, and neither may
 * reach into the other.
 */
export type WebhookChannel = 'wab' | 'rcs' | 'mms';

export const CARRIER_WEBHOOKS: Readonly<Record<WebhookChannel, WebhookHandler>> = Object.freeze({
  wab: whatsAppWebhook,
  rcs: rcsWebhook,
  mms: mmsWebhook,
});
