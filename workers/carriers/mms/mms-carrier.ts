import type { OutboundJob } from '../../../core/messages/bus-payloads';
import type { HttpCarrierConfig } from '../../../lib/config';
import { HermodError } from '../../../lib/errors';
import type { Logger } from '../../../lib/log';
import type { Carrier } from '../../carrier';

const REQUEST_TIMEOUT_MS = 10_000;

/**
 * MMS through a generic HTTP provider. hermod's contract with such a provider:
 *
 *   POST {baseUrl}/v1/mms
 *   Authorization: Bearer {token}
 *   {"from": "+15550000000", "to": "+64211234567", "subject"?: "…", "text"?: "…",
 *    "media": [{"url": "https://…/a.jpg", "content_type": "image/jpeg"}]}
 *   → 201 {"id": "…"}; errors 4xx/5xx with {"error": {"code": "…", "message": "…"}}
 *
 * Delivery reports are signed webhooks to the gateway (see mms-webhook.ts).
 */
export function createMmsCarrier(config: HttpCarrierConfig, log: Logger): Carrier {
  const url = `${config.baseUrl.replace(/\/+$/, '')}/v1/mms`;

  return {
    name: 'mms-http',
    async send(job: OutboundJob) {
      let res: Response;
      let body: unknown;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${config.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(mmsRequestBody(job, config.sender)),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        body = await res.json().catch(() => undefined);
      } catch (err) {
        throw new HermodError('carrier_transient', `MMS provider unreachable: ${describe(err)}`, { cause: err });
      }
      if (!res.ok) throw mmsError(res.status, body);
      const id = (body as { id?: unknown } | undefined)?.id;
      if (typeof id !== 'string' || !id) {
        // Accepted but unreadable: retrying could send twice, so give up on it.
        log.warn('the MMS provider accepted a message without an id', { id: job.id, status: res.status });
        throw new HermodError('carrier_rejected', `the MMS provider answered HTTP ${res.status} without a message id`);
      }
      return { carrierIds: [id] };
    },
    ready: async () => undefined,
    onReport: () => undefined,
    onInbound: () => undefined,
    close: async () => undefined,
  };
}

/** A media job's content is its URL unless the caller gave a text; only a real text is sent as text. */
export function mmsRequestBody(job: OutboundJob, from: string): Record<string, unknown> {
  const media = job.im?.type === 'media' ? job.im.media : undefined;
  const text = job.content && job.content !== media?.url ? job.content : '';
  return {
    from,
    to: job.destination,
    ...(job.im?.subject ? { subject: job.im.subject } : {}),
    ...(text ? { text } : {}),
    media: media ? [{ url: media.url, content_type: media.mimeType }] : [],
  };
}

function mmsError(httpStatus: number, body: unknown): HermodError {
  const error = (body as { error?: { message?: unknown; code?: unknown } } | undefined)?.error;
  const message = typeof error?.message === 'string' ? error.message : 'no error message';
  const code = typeof error?.code === 'string' || typeof error?.code === 'number' ? ` (${error.code})` : '';
  const retryable = httpStatus === 408 || httpStatus === 429 || httpStatus >= 500;
  return new HermodError(retryable ? 'carrier_transient' : 'carrier_rejected', `the MMS provider answered HTTP ${httpStatus}: ${message}${code}`);
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}
