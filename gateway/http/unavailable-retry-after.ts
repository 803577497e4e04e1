import type { Context, Middleware } from 'koa';

/**
 * Seconds a client is told to wait before retrying a request answered 503
 * (core, the bus or a hot-state shard out of reach for now). A core that died
 * is restarted after a second and takes a few more to serve again, so five
 * seconds finds most outages over without leaving clients idle for long, and
 * spares a core that is starting from a retry every few milliseconds.
 */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

/** `Retry-After` on an answer about an outage, unless whoever answered set its own. */
export function setUnavailableRetryAfter(ctx: Pick<Context, 'set' | 'response'>): void {
  if (!ctx.response.get('Retry-After')) ctx.set('Retry-After', String(UNAVAILABLE_RETRY_AFTER_S));
}

/** Every 503 (and 504: core did not answer in time) of an interface, whatever its error shape, says when to retry. */
export const unavailableRetryAfter: Middleware = async (ctx, next) => {
  await next();
  if (ctx.status === 503 || ctx.status === 504) setUnavailableRetryAfter(ctx);
};
