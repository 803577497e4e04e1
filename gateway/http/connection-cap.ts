import type { Server } from 'node:net';
import type { Socket } from 'node:net';
import type { Logger } from '../../lib/log';
import { plainAddress, type TrustedProxies } from '../../lib/trusted-proxies';

/** How often, at most, the refusals of one address are logged. */
const LOG_EVERY_MS = 60_000;

/**
 * At most `limit` open connections from one client address (0: no cap): a
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
    const address = plainAddress(socket.remoteAddress ?? '');
    if (!address || trusted.has(address)) return;
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
      refused.set(address, r);
      return;
    }
    open.set(address, now + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else {
        open.delete(address);
        refused.delete(address);
      }
    });
  });
}
