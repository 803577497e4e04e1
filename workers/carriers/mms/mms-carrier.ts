import type { OutboundJob } from '../../../core/ports/bus-payloads';
import type { HttpCarrierConfig } from '../../../lib/config';
import type { HermodError } from '../../../lib/errors';
import type { Logger } from '../../../lib/log';
import type { Carrier } from '../../carrier';
import { acceptedMessageId } from '../http/accepted-message-id';
import { httpAnswerError } from '../http/http-answer-error';
import { createHttpCarrier } from '../http/http-carrier';
import { postJson } from '../http/post-json';

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

  return createHttpCarrier('mms-http', async (job) => {
    const answer = await postJson(url, { peer: 'MMS provider', token: config.token, body: mmsRequestBody(job, config.sender) });
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
  };
}

function mmsError(httpStatus: number, body: unknown): HermodError {
  const error = (body as { error?: { message?: unknown; code?: unknown } } | undefined)?.error;
  const message = typeof error?.message === 'string' ? error.message : 'no error message';
  const code = typeof error?.code === 'string' || typeof error?.code === 'number' ? ` (${error.code})` : '';
  return httpAnswerError(httpStatus, `the MMS provider answered HTTP ${httpStatus}: ${message}${code}`);
}
