import type { HttpCarrierConfig } from '../../../lib/config';
import { HermodError } from '../../../lib/errors';
import { textTooLongFor } from '../../../core/domain/channel-text-limits';
import type { Logger } from '../../../lib/log';
import type { Carrier } from '../../carrier';
import { acceptedMessageId } from '../http/accepted-message-id';
import { createHttpCarrier } from '../http/http-carrier';
import { postJson } from '../http/post-json';
import { UnansweredRequestError } from '../http/unanswered-request-error';
import { UncertainSendError } from '../../uncertain-send-error';
import { whatsAppError } from './whatsapp-error';
import { whatsAppMessageBody } from './whatsapp-message-body';

/**
 * WhatsApp Business over the Cloud API (Graph). Sending is one POST per
 * message; delivery reports come as webhooks to the gateway (see
 * whatsapp-webhook.ts), so this carrier never emits reports itself.
 *
 * The Cloud API takes no idempotency key and cannot be asked about a message
 * by our id (biz_opaque_callback_data only comes back in webhooks). So a send
 * that got no answer (timed out after the request went out) may have been
 * delivered: it is not resent but given up as uncertain, unless the operator
 * chose duplicates over silence (HERMOD_WAB_RESEND_UNCERTAIN=true).
 */
export function createWhatsAppCarrier(config: HttpCarrierConfig, log: Logger): Carrier {
  if (!config.apiVersion) throw new Error('WhatsApp needs an API version (HERMOD_WAB_API_VERSION, e.g. v21.0)');
  const url = `${config.baseUrl.replace(/\/+$/, '')}/${config.apiVersion}/${encodeURIComponent(config.sender)}/messages`;

  return createHttpCarrier('whatsapp', async (job) => {
    // The Cloud API refuses it (error 100) anyway: said here, in words, and the next attempt taken at once.
    const tooLong = textTooLongFor('wab', job.im?.type ?? 'text', job.content);
    if (tooLong) throw new HermodError('invalid_attrib', tooLong);
    const answer = await postJson(url, { peer: 'WhatsApp', token: config.token, body: whatsAppMessageBody(job), timeoutMs: config.requestTimeoutMs }).catch(
      (err: unknown) => {
        if (!(err instanceof UnansweredRequestError) || config.resendUncertain) throw err;
        throw new UncertainSendError(`${err.message}; WhatsApp may have taken it and cannot be asked, so it is not resent`, { cause: err });
      },
    );
    if (!answer.ok) throw whatsAppError(answer.status, answer.body);
    const id = (answer.body as { messages?: { id?: unknown }[] } | undefined)?.messages?.[0]?.id;
    return { carrierIds: [acceptedMessageId(id, answer, { peer: 'WhatsApp', jobId: job.id, log })] };
  });
}
