import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { HermodError } from '../../lib/errors';

/** A callback URL must be absolute http(s); credentials in it are allowed (and used). */
export function checkCallbackUrlSyntax(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new HermodError('invalid_attrib', `not a URL: ${text}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new HermodError('invalid_attrib', 'callback URLs must be http or https');
  return url;
}

/** Loopback, private, link-local, unique-local, unspecified and similar addresses that a callback must not reach. */
export function isPrivateAddress(address: string): boolean {
  if (net.isIPv4(address)) {
    const [a, b] = address.split('.').map(Number) as [number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      a >= 224
    );
  }
  const v6 = address.toLowerCase();
  if (v6.startsWith('::ffff:')) return isPrivateAddress(v6.slice(7));
  return (
    v6 === '::' ||
    v6 === '::1' ||
    v6.startsWith('fc') ||
    v6.startsWith('fd') ||
    v6.startsWith('fe8') ||
    v6.startsWith('fe9') ||
    v6.startsWith('fea') ||
    v6.startsWith('feb') ||
    v6.startsWith('ff')
  );
}

/** Answers every A and AAAA address of a host name (the seam tests use to answer names their own way). */
export type ResolveHost = (host: string) => Promise<string[]>;

export const resolveWithSystem: ResolveHost = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

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
