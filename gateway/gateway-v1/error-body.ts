import type { Context, Next } from 'koa';
import { toHermodError, type ErrorCode } from '../../lib/errors';
import type { Logger } from '../../lib/log';

/** v1's short error codes, as its existing clients read them. */
const V1_CODE: Partial<Record<ErrorCode, string>> = {
  invalid_json: 'invalid_json',
  unsupported_media_type: 'invalid_json',
  missing_attrib: 'missing_attrib',
  invalid_attrib: 'invalid_attrib',
  broadcast_limit: 'broadcast_limit',
  body_too_large: 'invalid_attrib',
  unauthorized: 'unauthorized',
  not_found: 'not_found',
  method_not_allowed: 'method_not_allowed',
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
      render(ctx, e.httpStatus, V1_CODE[e.code] ?? 'send_failed', e.code === 'internal' ? 'internal error' : e.message);
      if (e.httpStatus === 401) ctx.set('WWW-Authenticate', 'Basic realm="hermod"');
    }
  };
}

function render(ctx: Context, status: number, code: string, message: string): void {
  ctx.status = status;
  ctx.body = { message, code: status, error: code, 'error-desc': message };
}
