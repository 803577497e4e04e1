import { STATUS_CODES } from 'node:http';
import type { Context, Next } from 'koa';
import { ERROR_CODES, toHermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';

/**
 * The error body of a path outside every interface (`/`, `/rest`, a
 * mistyped prefix): JSON any of the four interfaces' clients reads, as SPEC
 * names no shape there. `message` and `statusCode`, `error` as v2 has them,
 * `code` as v1, Campaign Manager and Intelligent Messaging do; a 404 names
 * where the interfaces are, since a mistyped prefix is what lands here.
 */
export function outsideErrors(log: Logger, prefixes: readonly string[]) {
  const where = `hermod's interfaces are under ${prefixes.slice(0, -1).join(', ')} and ${prefixes.at(-1)}`;
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) render(ctx, 404, `no route for ${ctx.method} ${ctx.path}; ${where}`);
    } catch (err) {
      const e = toHermodError(err);
      if (e.code === 'internal') log.error('request outside every interface failed', { err, path: ctx.path });
      render(ctx, ERROR_CODES[e.code].http, e.code === 'internal' ? 'internal error' : e.message);
    }
  };
}

function render(ctx: Context, status: number, message: string): void {
  ctx.status = status;
  ctx.body = outsideErrorBody(status, message);
}

/** The body of a refusal outside every interface (also the HTTP port's, https-redirect.ts). */
export function outsideErrorBody(status: number, message: string) {
  return { message, statusCode: status, error: STATUS_CODES[status] ?? 'Error', code: status };
}
