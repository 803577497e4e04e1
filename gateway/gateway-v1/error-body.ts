import type { Context, Next } from 'koa';
import { ERROR_CODES, toHermodError, type ErrorCode } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { answerType } from './answer-type';

/** v1's short error codes, as its existing clients read them. */
const V1_CODE: Partial<Record<ErrorCode, string>> = {
  invalid_json: 'invalid_json',
  unsupported_media_type: 'invalid_json',
  missing_attrib: 'missing_attrib',
  invalid_attrib: 'invalid_attrib',
  broadcast_limit: 'broadcast_limit',
  body_too_large: 'invalid_attrib',
  headers_too_large: 'invalid_attrib',
  expectation_failed: 'invalid_attrib',
  not_implemented: 'invalid_attrib',
  // What arrived of the body is no whole JSON document.
  request_timeout: 'invalid_json',
  unauthorized: 'unauthorized',
  too_many_auth_failures: 'unauthorized',
  not_found: 'not_found',
  method_not_allowed: 'method_not_allowed',
  quota_exceeded: 'quota_exceeded',
};
const OTHERWISE = 'send_failed';

/** v1 answers each error code with the code's own HTTP status. */
export const gatewayV1HttpStatus = (code: ErrorCode): number => ERROR_CODES[code].http;

/** The `error` of a v1 error body. */
export const gatewayV1ErrorName = (code: ErrorCode): string => V1_CODE[code] ?? OTHERWISE;

/** v1's error body as its OpenAPI document publishes it (SPEC.md §2.3 DefaultError, and what v1 clients read besides). */
export const GATEWAY_V1_ERROR_SCHEMAS = {
  DefaultError: {
    type: 'object',
    required: ['message', 'code', 'error', 'error-desc'],
    properties: {
      message: { type: 'string' },
      code: { type: 'integer', description: 'The HTTP status' },
      error: { type: 'string', enum: [...new Set([...Object.values(V1_CODE), OTHERWISE])] },
      'error-desc': { type: 'string', description: 'The message again' },
    },
  },
};

/** The only place that knows v1's error shape: `{ message, code, error, error-desc }`. */
export function gatewayV1Errors(log: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) render(ctx, 404, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
    } catch (err) {
      const e = toHermodError(err);
      if (e.code === 'internal') log.error('gateway v1 request failed', { err, path: ctx.path });
      const status = gatewayV1HttpStatus(e.code);
      render(ctx, status, gatewayV1ErrorName(e.code), e.code === 'internal' ? 'internal error' : e.message);
      if (status === 401) ctx.set('WWW-Authenticate', 'Basic realm="hermod"');
    }
  };
}

function render(ctx: Context, status: number, code: string, message: string): void {
  ctx.status = status;
  ctx.body = { message, code: status, error: code, 'error-desc': message };
  // In the vendor media type when the client asked for it, as the answers that succeed are.
  ctx.type = answerType(ctx);
}
