import { STATUS_CODES } from 'node:http';
import type { Context, Next } from 'koa';
import { ERROR_CODES, toHermodError, type ErrorCode, type HermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { setUnavailableRetryAfter } from '../http/unavailable-retry-after';
import { RETRY_AFTER_MAX, RETRY_AFTER_MIN } from './schemas';

/** SPEC.md §2.4, §8: at most 100 errors; message and description are LongStrings, field a ShortString. */
const MAX_ERRORS = 100;
const MAX_TEXT = 10_000;
const MAX_FIELD = 256;

export interface ApiErrorEntry {
  field?: string;
  code: number;
  description: string;
}

/** The interface declares only 500 among server errors: every 5xx is answered as 500. */
export const intelligentMessagingHttpStatus = (code: ErrorCode): number => Math.min(ERROR_CODES[code].http, 500);

const statusCode = { type: 'integer', format: 'int32', minimum: 200, maximum: 500, description: 'The HTTP status' };

/** The error body as the OpenAPI document publishes it (SPEC.md §2.4 APIError and Error, §7.3 the sample keys). */
export const INTELLIGENT_MESSAGING_ERROR_SCHEMAS = {
  APIError: {
    type: 'object',
    required: ['code', 'message', 'errors', 'statusCode', 'error'],
    properties: {
      code: statusCode,
      message: { type: 'string', maxLength: MAX_TEXT },
      errors: { type: 'array', minItems: 1, maxItems: MAX_ERRORS, items: { $ref: '#/$defs/Error' }, description: 'One entry per offending field' },
      statusCode,
      error: { type: 'string', description: "The HTTP status's reason phrase" },
    },
  },
  Error: {
    type: 'object',
    required: ['code', 'description'],
    properties: {
      field: { type: 'string', maxLength: MAX_FIELD, description: 'Path of the offending field, e.g. delivery_attempts[1].first.timeout' },
      code: { ...statusCode, format: 'int64' },
      description: { type: 'string', maxLength: MAX_TEXT },
    },
  },
};

/**
 * The only place that knows Intelligent Messaging's error shape, APIError
 * `{code, message, errors[]}` (code = the HTTP status), plus the `statusCode`
 * and `error` (reason phrase) keys the spec's sample bodies use.
 *
 * Statuses are the error code's own (400 validation, 401, 404, 413, 415, 422,
 * 429, ...), except that every 5xx is answered as 500: the interface declares
 * only 500 and bounds APIError.code to 200..500.
 */
export function intelligentMessagingErrors(log: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) render(ctx, 404, `no route for ${ctx.method} ${ctx.path}`, []);
    } catch (err) {
      const e = toHermodError(err);
      if (e.code === 'internal') log.error('intelligent messaging request failed', { err, path: ctx.path });
      const status = intelligentMessagingHttpStatus(e.code);
      render(ctx, status, e.code === 'internal' ? 'internal error' : e.message, e.code === 'internal' ? [] : e.fields);
      // The key goes in `authorization` bare or after Bearer/ApiKey; some clients send Basic instead.
      if (status === 401) ctx.set('WWW-Authenticate', 'Bearer realm="hermod", Basic realm="hermod"');
      // A 503 or 504 (core did not answer in time) answered as 500 still says when to retry; `RetryAfter` (10..1000 s) stays the rate limit's.
      if (ERROR_CODES[e.code].http === 503 || ERROR_CODES[e.code].http === 504) setUnavailableRetryAfter(ctx);
      // A wait the error knows (credentials refused for a while), in the interface's header and bounds as the rate limit's.
      if (e.retryAfterSeconds !== undefined) {
        const wait = String(Math.min(RETRY_AFTER_MAX, Math.max(RETRY_AFTER_MIN, e.retryAfterSeconds)));
        ctx.set('RetryAfter', wait);
        ctx.set('Retry-After', wait);
      }
    }
  };
}

function render(ctx: Context, status: number, message: string, fields: HermodError['fields']): void {
  const text = message.slice(0, MAX_TEXT);
  ctx.status = status;
  ctx.body = { code: status, message: text, errors: entries(status, text, fields), statusCode: status, error: STATUS_CODES[status] ?? 'Error' };
}

/** One entry per field, its problems joined; a failure about no field in particular is one entry without `field`. */
function entries(status: number, message: string, fields: HermodError['fields']): ApiErrorEntry[] {
  if (fields.length === 0) return [{ code: status, description: message }];
  const byField = new Map<string, string[]>();
  for (const f of fields) {
    const seen = byField.get(f.field);
    if (!seen) byField.set(f.field, [f.description]);
    else if (!seen.includes(f.description)) seen.push(f.description);
  }
  return [...byField].slice(0, MAX_ERRORS).map(([field, descriptions]) => ({
    ...(field ? { field: field.slice(0, MAX_FIELD) } : {}),
    code: status,
    description: descriptions.join('; ').slice(0, MAX_TEXT),
  }));
}
