import type { OutboundJob } from '../../../core/ports/bus-payloads';
import type { HttpCarrierConfig } from '../../../lib/config';
import type { HermodError } from '../../../lib/errors';
import type { Logger } from '../../../lib/log';
import type { Carrier } from '../../carrier';
import { httpAnswerError } from '../http/http-answer-error';
import { createHttpCarrier } from '../http/http-carrier';
import { postJson } from '../http/post-json';

/**
 * RCS Business Messaging (Google RBM): `POST /v1/phones/{E.164}/agentMessages`
 * with hermod's message id as RBM's `messageId`, which is then also the
 * carrier id. Delivery reports arrive as webhooks at the gateway (see
 * rcs-webhook.ts).
 */
export function createRcsCarrier(config: HttpCarrierConfig, log: Logger): Carrier {
  const base = config.baseUrl.replace(/\/+$/, '');

  return createHttpCarrier('rbm', async (job) => {
    const query = new URLSearchParams({ messageId: job.id, agentId: config.sender });
    const url = `${base}/v1/phones/${encodeURIComponent(job.destination)}/agentMessages?${query}`;
    const answer = await postJson(url, { peer: 'RBM', token: config.token, body: rcsMessageBody(job) });
    // The message id makes a send idempotent: ALREADY_EXISTS means an earlier
    // try (whose answer was lost) got through.
    if (answer.status === 409) {
      log.debug('RBM already had this message', { id: job.id });
      return { carrierIds: [job.id] };
    }
    if (!answer.ok) throw rcsError(answer.status, answer.body);
    return { carrierIds: [job.id] };
  });
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
  const what = httpStatus === 404 ? 'the phone cannot take RCS' : `RBM answered HTTP ${httpStatus}`;
  return httpAnswerError(httpStatus, `${what}: ${message}${status}`);
}
