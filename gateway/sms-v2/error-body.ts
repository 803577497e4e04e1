import { STATUS_CODES } from 'node:http';
import type { Context, Next } from 'koa';
import { ERROR_CODES, toHermodError, type ErrorCode } from '../../lib/errors';
import type { Logger } from '../../lib/log';

/** v2 answers each error code with the code's own HTTP status. */
export const smsV2HttpStatus = (code: ErrorCode): number => ERROR_CODES[code].http;

/** v2's error body as its OpenAPI document publishes it (SPEC.md §2.2 Error). */
export const SMS_V2_ERROR_SCHEMAS = {
  Error: {
    type: 'object',
    required: ['message', 'statusCode', 'error'],
    properties: {
      message: { type: 'string' },
      statusCode: { type: 'integer', format: 'int32', description: 'The HTTP status' },
      error: { type: 'string', description: "The HTTP status's reason phrase" },
    },
  },
};

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
      const status = smsV2HttpStatus(e.code);
      render(ctx, status, e.code === 'internal' ? 'internal error' : e.message);
      if (status === 401) ctx.set('WWW-Authenticate', 'Basic realm="hermod"');
    }
  };
}

function render(ctx: Context, status: number, message: string): void {
  ctx.status = status;
  ctx.body = { message, statusCode: status, error: STATUS_CODES[status] ?? 'Error' };
}
