import type { Middleware } from 'koa';

/**
 * An answer to a request whose body was refused part-way (too large, a member
 * over its limit, malformed JSON while streaming) says `Connection: close`:
 * the rest of the body is not read, and the connection goes with it, so a
 * keep-alive client sends its next request on a new connection instead of
 * having it reset on this one. Outside the error renderer, so the rendered
 * answer carries it.
 */
export const closeAfterUnreadBody: Middleware = async (ctx, next) => {
  try {
    await next();
  } finally {
    if (ctx.req.destroyed && !ctx.req.complete && !ctx.headerSent) ctx.set('Connection', 'close');
  }
};
