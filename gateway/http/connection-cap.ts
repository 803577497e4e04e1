import net, { type Server, type Socket } from 'node:net';
import type { Logger } from '../../lib/log';
import { plainAddress, type TrustedProxies } from '../../lib/trusted-proxies';

/** How often, at most, the refusals of one address are logged. */
const LOG_EVERY_MS = 60_000;
/** Past this many addresses refused lately, those not refused for a minute are forgotten. */
const REFUSED_KEPT = 10_000;

/**
 * The client a connection counts for: its IPv4 address, or the /64 network
 * of its IPv6 one (a host is given a /64, and would otherwise have endless
 * addresses to spread its connections over).
 */
export function clientOf(address: string): string {
  const plain = plainAddress(address);
  if (net.isIPv6(plain)) return `${ipv6Groups(plain).slice(0, 4).join(':')}::/64`;
  return plain;
}

/** The eight groups of an IPv6 address, `::` filled in (an IPv4 tail as two groups). */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const part = (p: string): string[] =>
    p === ''
      ? []
      : p.split(':').flatMap((g) => {
          if (!g.includes('.')) return [g.toLowerCase().padStart(4, '0')];
          const [a = 0, b = 0, c = 0, d = 0] = g.split('.').map(Number);
          return [((a << 8) | b).toString(16).padStart(4, '0'), ((c << 8) | d).toString(16).padStart(4, '0')];
        });
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  return [...left, ...new Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0000'), ...right];
}

/**
 * At most `limit` open connections from one client (0: no cap; an IPv6
 * client is its /64, see clientOf) on one server: a
 * client holding a thousand idle sockets held a thousand of the gateway's
 * descriptors. A connection over the cap is closed as it opens, before TLS.
 * Trusted proxies (HERMOD_TRUSTED_PROXIES) carry many clients and are not
 * capped. Refusals are logged once a minute per address, with how many.
 */
export function capConnectionsPerAddress(server: Server, limit: number, trusted: TrustedProxies, log: Logger): void {
  if (limit <= 0) return;
  const open = new Map<string, number>();
  const refused = new Map<string, { count: number; loggedAt: number }>();
  server.on('connection', (socket: Socket) => {
    const remote = socket.remoteAddress ?? '';
    if (!remote || trusted.has(remote)) return;
    const address = clientOf(remote);
    const now = open.get(address) ?? 0;
    if (now >= limit) {
      socket.destroy();
      const r = refused.get(address) ?? { count: 0, loggedAt: 0 };
      r.count++;
      if (Date.now() - r.loggedAt >= LOG_EVERY_MS) {
        log.warn('a client holds as many connections as one address may; refusing more', { remote: address, limit, refused: r.count });
        r.loggedAt = Date.now();
        r.count = 0;
      }
      if (refused.size >= REFUSED_KEPT && !refused.has(address))
        for (const [a, was] of refused) if (Date.now() - was.loggedAt >= LOG_EVERY_MS) refused.delete(a);
      refused.set(address, r);
      return;
    }
    open.set(address, now + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}
