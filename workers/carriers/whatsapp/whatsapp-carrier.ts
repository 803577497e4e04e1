import type { HttpCarrierConfig } from '../../../lib/config';
import type { Logger } from '../../../lib/log';
import type { Carrier } from '../../carrier';
import { acceptedMessageId } from '../http/accepted-message-id';
import { createHttpCarrier } from '../http/http-carrier';
import { postJson } from '../http/post-json';
import { whatsAppError } from './whatsapp-error';
import { whatsAppMessageBody } from './whatsapp-message-body';

/**
 * WhatsApp Business over the Cloud API (Graph). Sending is one POST per
 * message; delivery reports come as webhooks to the gateway (see
 * whatsapp-webhook.ts), so this carrier never emits reports itself.
 */
export function createWhatsAppCarrier(config: HttpCarrierConfig, log: Logger): Carrier {
  if (!config.apiVersion) throw new Error('WhatsApp needs an API version (HERMOD_WAB_API_VERSION, e.g. v21.0)');
  const url = `${config.baseUrl.replace(/\/+$/, '')}/${config.apiVersion}/${encodeURIComponent(config.sender)}/messages`;

  return createHttpCarrier('whatsapp', async (job) => {
    const answer = await postJson(url, { peer: 'WhatsApp', token: config.token, body: whatsAppMessageBody(job) });
    if (!answer.ok) throw whatsAppError(answer.status, answer.body);
    const id = (answer.body as { messages?: { id?: unknown }[] } | undefined)?.messages?.[0]?.id;
    return { carrierIds: [acceptedMessageId(id, answer, { peer: 'WhatsApp', jobId: job.id, log })] };
  });
}
