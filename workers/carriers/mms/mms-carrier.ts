import type { OutboundJob } from '../../../core/ports/bus-payloads';
import type { HttpCarrierConfig } from '../../../lib/config';
import { HermodError } from '../../../lib/errors';
import type { Logger } from '../../../lib/log';
import type { Carrier } from '../../carrier';
import { acceptedMessageId } from '../http/accepted-message-id';
import { httpAnswerError } from '../http/http-answer-error';
import { createHttpCarrier } from '../http/http-carrier';
import { getJson, postJson } from '../http/post-json';
import { UnansweredRequestError } from '../http/unanswered-request-error';

/**
 * MMS through a generic HTTP provider. hermod's contract with such a provider:
 *
 *   POST {baseUrl}/v1/mms
 *   Authorization: Bearer {token}
 *   {"from": "+15550000000", "to": "+64211234567", "subject"?: "…", "text"?: "…",
 *    "media": [{"url": "https://…/a.jpg", "content_type": "image/jpeg"}], "client_ref": "<our message id>"}
 *   → 201 {"id": "…"}; errors 4xx/5xx with {"error": {"code": "…", "message": "…"}}
 *
 *   GET {baseUrl}/v1/mms?client_ref=<our message id>
 *   → 200 {"messages": [{"id": "…", "client_ref": "…"}]} (empty when none was taken)
 *
 * A send that got no answer may have been taken: before it is sent again the
 * provider is asked by our id, and a message it has is taken as the outcome
 * (never a second send). Until that question is answered the job is not sent.
 * A job the bus hands out again (its worker crashed or lost it) is asked about
 * first the same way.
 * Delivery reports are signed webhooks to the gateway (see mms-webhook.ts).
 */
export function createMmsCarrier(config: HttpCarrierConfig, log: Logger): Carrier {
  const url = `${config.baseUrl.replace(/\/+$/, '')}/v1/mms`;
  const timeoutMs = config.requestTimeoutMs;
  /** Jobs whose last send got no answer: asked about before any resend. */
  const unanswered = new Set<string>();

  /** The provider's ids for a message it took with our id; [] when it has none. Throws when it cannot say. */
  const lookUp = async (jobId: string): Promise<string[]> => {
    const answer = await getJson(`${url}?client_ref=${encodeURIComponent(jobId)}`, { peer: 'MMS provider', token: config.token, timeoutMs });
    if (!answer.ok) throw mmsError(answer.status, answer.body, true);
    const messages = (answer.body as { messages?: { id?: unknown }[] } | undefined)?.messages;
    if (!Array.isArray(messages)) throw new HermodError('carrier_transient', 'the MMS provider answered a lookup without a messages list');
    return messages.map((m) => m?.id).filter((id): id is string => typeof id === 'string' && id !== '');
  };

  const reconcile = async (jobId: string): Promise<string[]> => {
    const ids = await lookUp(jobId);
    unanswered.delete(jobId);
    if (ids.length > 0) log.info('an MMS whose send got no answer was taken by the provider; not sent again', { id: jobId, carrierIds: ids });
    return ids;
  };

  return createHttpCarrier('mms-http', async (job, handover) => {
    // Also a job handed out again: the worker that had it may have sent it and died before the answer.
    if (unanswered.has(job.id) || handover?.redelivered) {
      const taken = await reconcile(job.id);
      if (taken.length > 0) return { carrierIds: taken };
    }
    const answer = await postJson(url, { peer: 'MMS provider', token: config.token, body: mmsRequestBody(job, config.sender), timeoutMs }).catch(
      async (err: unknown) => {
        if (!(err instanceof UnansweredRequestError)) throw err;
        unanswered.add(job.id);
        // Asked at once: a provider that took it answers now, and the worker records it without a retry's wait.
        const taken = await reconcile(job.id).catch(() => []);
        if (taken.length > 0) return { status: 201, ok: true, body: { id: taken[0] } };
        throw err;
      },
    );
    if (!answer.ok) throw mmsError(answer.status, answer.body);
    const id = (answer.body as { id?: unknown } | undefined)?.id;
    return { carrierIds: [acceptedMessageId(id, answer, { peer: 'the MMS provider', jobId: job.id, log })] };
  });
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
    client_ref: job.id,
  };
}

/** `lookup`: a failed question about an earlier send is never a verdict on the message, so it is always retried. */
function mmsError(httpStatus: number, body: unknown, lookup = false): HermodError {
  const error = (body as { error?: { message?: unknown; code?: unknown } } | undefined)?.error;
  const message = typeof error?.message === 'string' ? error.message : 'no error message';
  const code = typeof error?.code === 'string' || typeof error?.code === 'number' ? ` (${error.code})` : '';
  return httpAnswerError(httpStatus, `the MMS provider answered HTTP ${httpStatus}: ${message}${code}`, lookup);
}
