import type { Middleware } from 'koa';
import { HermodError } from '../../lib/errors';

/**
 * Refuses a request with more than one Authorization header before anyone
 * reads it: Node keeps the first and drops the rest, so which tenant the
 * request acted as depended on the order a client or a proxy wrote them in.
 * RFC 9110 allows the field once; the answer is the interface's 401.
 */
export const oneAuthorization: Middleware = async (ctx, next) => {
  const raw = ctx.req.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === 'authorization' && ++seen > 1) break;
  if (seen > 1) throw new HermodError('unauthorized', 'more than one Authorization header: send exactly one');
  await next();
};
