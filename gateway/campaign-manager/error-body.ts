import type { Context, Next } from 'koa';
import { toHermodError, type ErrorCode } from '../../lib/errors';
import type { Logger } from '../../lib/log';

/**
 * The only place that knows Campaign Manager's error shapes: DefaultError
 * `{code, message}` (code = the HTTP status), and plain text for delete list,
 * delete multiple lists and healthz (routes mark those with
 * ctx.state.plainErrors). Validation failures are 422, as clients expect.
 */
const STATUS: Partial<Record<ErrorCode, number>> = {
  missing_attrib: 422,
  invalid_attrib: 422,
  unprocessable: 422,
  broadcast_limit: 422,
};

export function campaignManagerErrors(log: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) render(ctx, 404, `no route for ${ctx.method} ${ctx.path}`);
    } catch (err) {
      const e = toHermodError(err);
      if (e.code === 'internal') log.error('campaign manager request failed', { err, path: ctx.path });
      render(ctx, STATUS[e.code] ?? e.httpStatus, e.code === 'internal' ? 'internal error' : e.message);
      if (e.httpStatus === 401) ctx.set('WWW-Authenticate', 'Basic realm="hermod"');
    }
  };
}

function render(ctx: Context, status: number, message: string): void {
  ctx.status = status;
  if (ctx.state.plainErrors) {
    ctx.type = 'text/plain';
    ctx.body = `error: ${message}`;
  } else {
    ctx.body = { code: status, message };
  }
}
