import { STATUS_CODES } from 'node:http';
import type { Context, Next } from 'koa';
import { toHermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';

/** The only place that knows v2's error shape: `{ message, statusCode, error }`. */
export function smsV2Errors(log: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        render(ctx, 404, `no route for ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      const e = toHermodError(err);
      if (e.code === 'internal') log.error('sms v2 request failed', { err, path: ctx.path });
      render(ctx, e.httpStatus, e.code === 'internal' ? 'internal error' : e.message);
      if (e.httpStatus === 401) ctx.set('WWW-Authenticate', 'Basic realm="hermod"');
    }
  };
}

function render(ctx: Context, status: number, message: string): void {
  ctx.status = status;
  ctx.body = { message, statusCode: status, error: STATUS_CODES[status] ?? 'Error' };
}
