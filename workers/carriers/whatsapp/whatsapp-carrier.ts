import type { OutboundJob } from '../../../core/messages/bus-payloads';
import type { HttpCarrierConfig } from '../../../lib/config';
import { HermodError } from '../../../lib/errors';
import type { Logger } from '../../../lib/log';
import type { Carrier } from '../../carrier';
import { whatsAppError } from './whatsapp-error';
import { whatsAppMessageBody } from './whatsapp-message-body';

const REQUEST_TIMEOUT_MS = 10_000;

/**
 * WhatsApp Business over the Cloud API (Graph). Sending is one POST per
 * message; delivery reports come as webhooks to the gateway (see
 * whatsapp-webhook.ts), so this carrier never emits reports itself.
 */
export function createWhatsAppCarrier(config: HttpCarrierConfig, log: Logger): Carrier {
  if (!config.apiVersion) throw new Error('WhatsApp needs an API version (HERMOD_WAB_API_VERSION, e.g. v21.0)');
  const url = `${config.baseUrl.replace(/\/+$/, '')}/${config.apiVersion}/${encodeURIComponent(config.sender)}/messages`;

  return {
    name: 'whatsapp',
    async send(job: OutboundJob) {
      let res: Response;
      let body: unknown;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${config.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(whatsAppMessageBody(job)),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        body = await res.json().catch(() => undefined);
      } catch (err) {
        throw new HermodError('carrier_transient', `WhatsApp unreachable: ${describe(err)}`, { cause: err });
      }
      if (!res.ok) throw whatsAppError(res.status, body);
      const id = (body as { messages?: { id?: unknown }[] } | undefined)?.messages?.[0]?.id;
      if (typeof id !== 'string' || !id) {
        // Accepted but unreadable: retrying could send twice, so give up on it.
        log.warn('WhatsApp accepted a message without an id', { id: job.id, status: res.status });
        throw new HermodError('carrier_rejected', `WhatsApp answered HTTP ${res.status} without a message id`);
      }
      return { carrierIds: [id] };
    },
    ready: async () => undefined,
    onReport: () => undefined,
    onInbound: () => undefined,
    close: async () => undefined,
  };
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}
