import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { CoreClient } from '../core-client';
import { HermodError, toHermodError } from '../../lib/errors';

/** Short links from SMS content: `/l/<code>` redirects to the original URL (and core records the click). */
export function shortLinkRouter(deps: { core: CoreClient }): Router {
  const router = new Router({ prefix: '/l' });
  router.get('/:code', async (ctx) => {
    const { url } = await deps.core.resolveShortLink({ code: ctx.params.code ?? '', userAgent: ctx.get('user-agent'), ip: ctx.ip });
    ctx.status = 302;
    ctx.redirect(url);
  });
  return router;
}

/** People follow these links in a browser: errors are short plain text. */
export async function shortLinkErrors(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) throw new HermodError('not_found', 'no such link');
  } catch (err) {
    const e = toHermodError(err);
    ctx.status = e.code === 'internal' ? 404 : e.httpStatus;
    ctx.type = 'text/plain';
    ctx.body = e.httpStatus === 404 || e.code === 'internal' ? 'This link does not exist.\n' : 'This link cannot be opened right now.\n';
  }
}
