import type { OutboundJob } from '../../../core/ports/bus-payloads';
import { textTooLongFor } from '../../../core/domain/channel-text-limits';
import type { RcsCarrierConfig } from '../../../lib/config';
import { HermodError } from '../../../lib/errors';
import type { Logger } from '../../../lib/log';
import type { Carrier } from '../../carrier';
import { httpAnswerError } from '../http/http-answer-error';
import { createHttpCarrier } from '../http/http-carrier';
import { postJson, type JsonAnswer } from '../http/post-json';
import { createRbmAccessTokens, type RbmAccessTokens } from './rbm-access-tokens';
import { readServiceAccountKey } from './rbm-service-account';

/**
 * RCS Business Messaging (Google RBM): `POST /v1/phones/{E.164}/agentMessages`
 * with hermod's message id as RBM's `messageId`, which is then also the
 * carrier id. Delivery reports arrive as webhooks at the gateway (see
 * rcs-webhook.ts). Calls carry an OAuth access token of the service account
 * (rbm-access-tokens.ts); one RBM refuses with 401 (expired early, revoked)
 * is dropped and the call made once more with a new one.
 */
export function createRcsCarrier(config: RcsCarrierConfig, log: Logger, options: { refreshBeforeMs?: number } = {}): Carrier {
  const base = config.baseUrl.replace(/\/+$/, '');
  let tokens: RbmAccessTokens | undefined;
  // The key file is read at the first send: a missing one rejects sends with the reason instead of stopping the worker.
  const tokenSource = (): RbmAccessTokens => (tokens ??= createRbmAccessTokens(readServiceAccountKey(config.serviceAccount), options));

  const post = async (url: string, job: OutboundJob): Promise<JsonAnswer> => {
    const source = tokenSource();
    const answer = await postJson(url, { peer: 'RBM', token: await source.token(), body: rcsMessageBody(job) });
    if (answer.status !== 401) return answer;
    log.info('RBM refused the access token; fetching a new one', { id: job.id });
    source.invalidate();
    return postJson(url, { peer: 'RBM', token: await source.token(), body: rcsMessageBody(job) });
  };

  return createHttpCarrier('rbm', async (job) => {
    // RBM refuses it (INVALID_ARGUMENT) anyway: said here, in words, and the next attempt taken at once.
    const tooLong = textTooLongFor('rcs', job.im?.type ?? 'text', job.content);
    if (tooLong) throw new HermodError('invalid_attrib', tooLong);
    const query = new URLSearchParams({ messageId: job.id, agentId: config.sender });
    // The phone's plus stays as it is, as Google writes the path (`phones/+12223334444`); it is legal in a path.
    const url = `${base}/v1/phones/${encodeURIComponent(job.destination).replace(/^%2B/, '+')}/agentMessages?${query}`;
    const answer = await post(url, job);
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
