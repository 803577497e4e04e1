import net, { type Server, type Socket } from 'node:net';
import type { Logger } from '../../lib/log';
import { ipv6Words } from '../../lib/ipv6-words';
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
  const words = net.isIPv6(plain) ? ipv6Words(plain) : undefined;
  return words
    ? `${words
        .slice(0, 4)
        .map((w) => w.toString(16).padStart(4, '0'))
        .join(':')}::/64`
    : plain;
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
