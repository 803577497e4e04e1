import type Router from '@koa/router';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import { HermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { clientClosed } from './client-closed';
import { oneAuthorization } from './one-authorization';
import { unavailableRetryAfter } from './unavailable-retry-after';
import { closeAfterUnreadBody } from './close-after-unread-body';
import type { OutageLog } from './outage-log';

/**
 * One interface's router under its error renderer, so every failure under its
 * prefix has its shape. A known path asked with another method is answered
 * 405 (501 for a method the router knows nothing of) with the Allow header
 * RFC 9110 asks for, and the interface's own error body. A 503 says when to
 * retry (`Retry-After`), as 409 and 429 do; so does any error that knows
 * when (`retryAfterSeconds`), whatever the interface's body. A client gone in
 * the middle of its body is counted 499, never rendered (client-closed.ts).
 */
export function interfaceHandler(errors: Middleware, router: Router, log: Logger, outages?: OutageLog): Middleware {
  // The router's throwing mode leaves Allow out; its quiet mode sets status and header, and the body is made here.
  const methods = router.allowedMethods();
  const inInterfaceShape: Middleware = async (ctx, next) => {
    await next();
    if ((ctx.status === 405 || ctx.status === 501) && ctx.body == null) {
      throw new HermodError('method_not_allowed', ctx.status === 405 ? 'method not allowed' : 'method not implemented');
    }
  };
  const told: Middleware = async (ctx, next) => {
    try {
      await next();
    } finally {
      outages?.answered(ctx.status, (ctx.state as { unavailable?: string }).unavailable);
    }
  };
  return compose([
    told,
    closeAfterUnreadBody,
    unavailableRetryAfter,
    errors,
    retryAfterOfError,
    clientClosed(log),
    oneAuthorization,
    router.routes() as Middleware,
    inInterfaceShape,
    methods as Middleware,
  ]);
}

/** Inside the error renderer: sets `Retry-After` from the error on its way out to the renderer. */
const retryAfterOfError: Middleware = async (ctx, next) => {
  try {
    await next();
  } catch (err) {
    if (err instanceof HermodError && err.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(err.retryAfterSeconds));
    // Said to the outage log whatever status the interface answers it with (Intelligent Messaging: 500).
    if (err instanceof HermodError && (err.code === 'unavailable' || err.code === 'timeout')) (ctx.state as { unavailable?: string }).unavailable = err.message;
    throw err;
  }
};
