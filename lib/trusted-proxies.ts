import net from 'node:net';

/** Thrown for an entry of HERMOD_TRUSTED_PROXIES that is no address or network. */
export class TrustedProxyError extends Error {}

export interface TrustedProxies {
  /** Whether a peer's address is one of the proxies. */
  has(address: string): boolean;
}

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** `::ffff:10.0.0.1` (an IPv4 peer on a dual-stack socket) read as `10.0.0.1`. */
export function plainAddress(address: string): string {
  return MAPPED_V4.exec(address)?.[1] ?? address;
}

/**
 * The proxies hermod's gateways sit behind (HERMOD_TRUSTED_PROXIES): addresses
 * and networks such as `10.0.0.0/8, 192.168.1.7, fd00::/8`.
 */
export function parseTrustedProxies(entries: readonly string[]): TrustedProxies {
  const list = new net.BlockList();
  for (const raw of entries) {
    const entry = raw.trim();
    const [address = '', prefix, extra] = entry.split('/');
    const type = net.isIP(address);
    const bits = type === 4 ? 32 : 128;
    if (type === 0 || extra !== undefined || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits)))
      throw new TrustedProxyError(`${JSON.stringify(entry)} is not an address or a network such as 10.0.0.0/8 or fd00::/8`);
    const family = type === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return {
    has(address) {
      const a = plainAddress(address);
      const type = net.isIP(a);
      return type !== 0 && list.check(a, type === 4 ? 'ipv4' : 'ipv6');
    },
  };
}
