import type { Context, Middleware } from 'koa';
import type { Logger } from '../../lib/log';

/** nginx's "client closed request": the client went away before it could be answered. */
export const CLIENT_CLOSED_STATUS = 499;

/**
 * Whether `err` is the request body failing because its client went away
 * before sending all of it (`aborted`, ECONNRESET): the error Node gave the
 * request's own stream, or one caused by it. Nothing else is, so a fault of
 * ours met while the client was still there stays a 500.
 */
export function clientClosedBody(ctx: Context, err: unknown): boolean {
  const gone = ctx.req.errored;
  if (!gone || ctx.req.complete) return false;
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (e === gone) return true;
  return false;
}

/**
 * Under an interface's error renderer: a request whose client closed the
 * connection in the middle of its body is counted 499 and logged at info,
 * not rendered as a 500 (one flaky client paged operators through
 * HermodHttp5xxRate). Nothing is sent: the socket is gone.
 */
export function clientClosed(log: Logger): Middleware {
  return async (ctx, next) => {
    // Read now: a closed socket has no address left.
    const remote = ctx.ip;
    try {
      await next();
    } catch (err) {
      if (!clientClosedBody(ctx, err)) throw err;
      // Answered already (408, its body stopped arriving: request-timeouts.ts), and counted under that status.
      if (ctx.res.headersSent) return;
      log.info('client closed the request before its body arrived', {
        interface: ctx.state.interface as string | undefined,
        method: ctx.method,
        path: ctx.path,
        remote,
      });
      ctx.status = CLIENT_CLOSED_STATUS;
    }
  };
}
