import type { Middleware } from 'koa';
import { timesSent } from './times-sent';
import { HermodError } from '../../lib/errors';

/**
 * Refuses a request with more than one Authorization header before anyone
 * reads it: Node keeps the first and drops the rest, so which tenant the
 * request acted as depended on the order a client or a proxy wrote them in.
 * RFC 9110 allows the field once; the answer is the interface's 401.
 */
export const oneAuthorization: Middleware = async (ctx, next) => {
  if (timesSent(ctx.req.rawHeaders, 'authorization') > 1) throw new HermodError('unauthorized', 'more than one Authorization header: send exactly one');
  await next();
};
