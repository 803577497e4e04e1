import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { HermodError } from '../../lib/errors';
import { ipv6Words } from '../../lib/ipv6-words';

/**
 * A callback URL must be absolute http(s) with a port a receiver can listen
 * on (not 0, which nothing can be reached at: every try would fail for the
 * whole retry window); credentials in it are allowed (and used).
 */
export function checkCallbackUrlSyntax(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new HermodError('invalid_attrib', `not a URL: ${text}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new HermodError('invalid_attrib', 'callback URLs must be http or https');
  // The URL standard reads `http:///host`, `http:host` and `http:\\host` as http://host/: a typo that names another host.
  if (!/^https?:\/\/[^/\\]/i.test(text.trim()))
    throw new HermodError('invalid_attrib', `callback URL ${JSON.stringify(text)} has no host: write it as https://host/path`);
  if (url.port === '0')
    throw new HermodError('invalid_attrib', `callback URL ${url.origin} has port 0, where no receiver can be reached; give the receiver's port`);
  // The user name and password become Basic authentication, decoded: one that cannot be decoded could never be sent.
  for (const [part, value] of [
    ['user name', url.username],
    ['password', url.password],
  ] as const) {
    try {
      decodeURIComponent(value);
    } catch {
      throw new HermodError(
        'invalid_attrib',
        `callback URL ${url.origin}: its ${part} has a broken percent-encoding (a % must start %XX of UTF-8 bytes; write % itself as %25)`,
      );
    }
  }
  return url;
}

function isPrivateV4(address: string): boolean {
  const [a, b, c] = address.split('.').map(Number) as [number, number, number];
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113) ||
    a >= 224
  );
}

const v4Of = (hi: number, lo: number): string => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;

/**
 * Loopback, private, link-local, unique-local, unspecified, documentation and
 * similar addresses that a callback must not reach, in IPv4 and IPv6. An IPv6
 * address that carries an IPv4 one (IPv4-mapped in either written form,
 * IPv4-compatible, IPv4-translated, NAT64, 6to4) is judged by that IPv4 address, so
 * `[::ffff:7f00:1]` is loopback as `127.0.0.1` is; Teredo is refused whole.
 */
export function isPrivateAddress(address: string): boolean {
  if (net.isIPv4(address)) return isPrivateV4(address);
  const w = ipv6Words(address);
  // Not an address this can read: never a callback's target.
  if (!w) return true;
  const zeros = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible; :: and ::1 among them), 64:ff9b::a.b.c.d (NAT64).
  if (zeros(0, 5) && (w[5] === 0xffff || w[5] === 0)) return isPrivateV4(v4Of(w[6]!, w[7]!));
  // ::ffff:0:a.b.c.d (IPv4-translated, SIIT).
  if (zeros(0, 4) && w[4] === 0xffff && w[5] === 0) return isPrivateV4(v4Of(w[6]!, w[7]!));
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return isPrivateV4(v4Of(w[6]!, w[7]!));
  if (w[0] === 0x64 && w[1] === 0xff9b && w[2] === 1) return true; // local-use NAT64
  if (w[0] === 0x2002) return isPrivateV4(v4Of(w[1]!, w[2]!)); // 6to4
  if (w[0] === 0x2001 && w[1] === 0) return true; // Teredo
  if (w[0] === 0x2001 && w[1] === 0xdb8) return true; // documentation
  if (w[0] === 0x100 && zeros(1, 4)) return true; // discard-only
  const first = w[0]!;
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xffc0) === 0xfec0 || // site-local fec0::/10 (deprecated)
    (first & 0xff00) === 0xff00 // multicast
  );
}

/** Answers every A and AAAA address of a host name (the seam tests use to answer names their own way). */
export type ResolveHost = (host: string) => Promise<string[]>;

/**
 * The system resolver, but for names under `.localhost`: this machine's loopback addresses, as RFC 6761 §6.3 asks
 * of resolvers and browsers and curl do (glibc leaves them to DNS, where they do not resolve).
 */
export const resolveWithSystem: ResolveHost = async (host) => {
  if (/\.localhost\.?$/i.test(host)) return ['127.0.0.1', '::1'];
  return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
};

/**
 * Resolves the host of a callback URL and refuses it when any address it
 * resolves to is private (SSRF protection), unless that is allowed for
 * development. Returns every address it checked: the connection may go to
 * those and no others, so DNS cannot be switched in between.
 */
export async function resolveCallbackTarget(url: URL, allowPrivate: boolean, resolve: ResolveHost = resolveWithSystem): Promise<string[]> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await resolve(host)).filter((a) => net.isIP(a) !== 0);
    } catch (err) {
      throw new HermodError('unavailable', `${host} does not resolve`, { retryable: true, cause: err });
    }
  }
  if (addresses.length === 0) throw new HermodError('unavailable', `${host} does not resolve`, { retryable: true });
  if (!allowPrivate && addresses.some(isPrivateAddress)) {
    throw new HermodError('forbidden', `callback URL ${url.origin} resolves to a private or loopback address`);
  }
  return [...new Set(addresses)];
}
