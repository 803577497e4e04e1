import type { HermodError } from '../../../lib/errors';
import { httpAnswerError } from '../http/http-answer-error';

/**
 * Graph API error codes that mean "try again later" whatever the HTTP status:
 * Meta reports throttling and some outages as HTTP 400.
 */
const RETRY_LATER = new Set([
  1, // API unknown
  2, // API service (temporarily unavailable)
  4, // application request limit
  17, // user request limit
  341, // application limit
  80007, // WhatsApp Business Account rate limit
  130429, // throughput rate limit
  131000, // something went wrong
  131016, // service unavailable
  131048, // spam rate limit
  131056, // too many messages to one recipient (pair rate limit)
  133004, // server temporarily unavailable
]);

/** A failed Cloud API answer as a HermodError: retryable for 408, 429, 5xx and the codes above. */
export function whatsAppError(httpStatus: number, body: unknown): HermodError {
  const error = (body as { error?: { message?: unknown; code?: unknown } } | undefined)?.error;
  const code = typeof error?.code === 'number' ? error.code : undefined;
  const message = typeof error?.message === 'string' ? error.message : 'no error message';
  const text = `WhatsApp answered HTTP ${httpStatus}: ${message}${code === undefined ? '' : ` (code ${code})`}`;
  return httpAnswerError(httpStatus, text, code !== undefined && RETRY_LATER.has(code));
}
