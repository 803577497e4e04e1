import type { Middleware } from 'koa';

/**
 * Repeated slashes in a request's path count as one (nginx's merge_slashes):
 * a client that joins a base URL ending in `/` to `/rest/…` asks for
 * `//rest/…`, and is answered by that interface, not with a bare 404.
 */
export const mergeSlashes: Middleware = async (ctx, next) => {
  const merged = mergedSlashes(ctx.path);
  if (merged !== ctx.path) ctx.path = merged;
  await next();
};

/** A path with each run of slashes as one; also for the answers made before Koa (a 431, a 408). */
export const mergedSlashes = (path: string): string => (path.includes('//') ? path.replace(/\/{2,}/g, '/') : path);
