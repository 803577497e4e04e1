import type { OutboundJob } from '../../../core/messages/bus-payloads';
import type { HttpCarrierConfig } from '../../../lib/config';
import { HermodError } from '../../../lib/errors';
import type { Logger } from '../../../lib/log';
import type { Carrier } from '../../carrier';

const REQUEST_TIMEOUT_MS = 10_000;

/**
 * RCS Business Messaging (Google RBM): `POST /v1/phones/{E.164}/agentMessages`
 * with hermod's message id as RBM's `messageId`, which is then also the
 * carrier id. Delivery reports arrive as webhooks at the gateway (see
 * rcs-webhook.ts).
 */
export function createRcsCarrier(config: HttpCarrierConfig, log: Logger): Carrier {
  const base = config.baseUrl.replace(/\/+$/, '');

  return {
    name: 'rbm',
    async send(job: OutboundJob) {
      const query = new URLSearchParams({ messageId: job.id, agentId: config.sender });
      const url = `${base}/v1/phones/${encodeURIComponent(job.destination)}/agentMessages?${query}`;
      let res: Response;
      let body: unknown;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${config.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(rcsMessageBody(job)),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        body = await res.json().catch(() => undefined);
      } catch (err) {
        throw new HermodError('carrier_transient', `RBM unreachable: ${describe(err)}`, { cause: err });
      }
      // The message id makes a send idempotent: ALREADY_EXISTS means an earlier
      // try (whose answer was lost) got through.
      if (res.status === 409) {
        log.debug('RBM already had this message', { id: job.id });
        return { carrierIds: [job.id] };
      }
      if (!res.ok) throw rcsError(res.status, body);
      return { carrierIds: [job.id] };
    },
    ready: async () => undefined,
    onReport: () => undefined,
    onInbound: () => undefined,
    close: async () => undefined,
  };
}

/** An AgentMessage: a media job's file, anything else its (already rendered) text. */
export function rcsMessageBody(job: OutboundJob): { contentMessage: Record<string, unknown> } {
  const media = job.im?.type === 'media' ? job.im.media : undefined;
  if (media) return { contentMessage: { contentInfo: { fileUrl: media.url, forceRefresh: false } } };
  return { contentMessage: { text: job.content } };
}

/** A Google API error (`{error: {code, message, status}}`) as a HermodError: 404 is a phone without RCS. */
function rcsError(httpStatus: number, body: unknown): HermodError {
  const error = (body as { error?: { message?: unknown; status?: unknown } } | undefined)?.error;
  const message = typeof error?.message === 'string' ? error.message : 'no error message';
  const status = typeof error?.status === 'string' ? ` (${error.status})` : '';
  const retryable = httpStatus === 408 || httpStatus === 429 || httpStatus >= 500;
  const what = httpStatus === 404 ? 'the phone cannot take RCS' : `RBM answered HTTP ${httpStatus}`;
  return new HermodError(retryable ? 'carrier_transient' : 'carrier_rejected', `${what}: ${message}${status}`);
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}
