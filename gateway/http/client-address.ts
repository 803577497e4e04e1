import net from 'node:net';
import type { Middleware } from 'koa';
import { plainAddress, type TrustedProxies } from '../../lib/trusted-proxies';

/**
 * The client's address: the peer's, unless the peer is a trusted proxy; then
 * X-Forwarded-For is read from its right end (what the nearest proxy added)
 * past every trusted proxy, as nginx's real_ip_recursive does. What a client
 * wrote at the left end itself is never believed over what a proxy saw.
 */
export function clientAddressOf(peer: string, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  let client = plainAddress(peer);
  if (!forwardedFor || !trusted.has(client)) return client;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = plainAddress(hops[i]!.trim());
    if (net.isIP(hop) === 0) return client;
    client = hop;
    if (!trusted.has(hop)) return client;
  }
  return client;
}

/** Sets `ctx.ip` (which the failed-login limits, logs and link clicks read) to the client's address. */
export function clientAddress(trusted: TrustedProxies): Middleware {
  return async (ctx, next) => {
    ctx.request.ip = clientAddressOf(ctx.req.socket.remoteAddress ?? '', ctx.get('x-forwarded-for') || undefined, trusted);
    await next();
  };
}
