import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { HermodError } from '../../lib/errors';
import { cachedResolver } from './cached-resolver';
import { checkCallbackUrlSyntax, resolveCallbackTarget, resolveWithSystem, type ResolveHost } from './callback-url';

/** The system resolver's answers, kept 30 s: one lookup per receiver name, not one per callback. */
const systemResolver = cachedResolver(resolveWithSystem, { ttlMs: 30_000 });

/** Request options that carry the addresses a connection may go to (see the agents below). */
type PinnedOptions = http.RequestOptions & { pinned?: string };

/**
 * Agents pool sockets by host name and port. A pooled socket must still go to
 * an address the current DNS answer holds and that was checked with it, so
 * the pool key also holds that answer: a name that now answers other
 * addresses gets a new connection, made only to those.
 */
class PinnedHttpAgent extends http.Agent {
  override getName(options?: PinnedOptions): string {
    return `${super.getName(options)}|${options?.pinned ?? ''}`;
  }
}
class PinnedHttpsAgent extends https.Agent {
  override getName(options?: PinnedOptions): string {
    return `${super.getName(options)}|${options?.pinned ?? ''}`;
  }
}

/**
 * Connections to receivers are kept and reused: a busy application gets
 * thousands of callbacks a second, and a new TCP (and TLS) connection for each
 * would cost more than the callback itself.
 */
const AGENTS = {
  'http:': new PinnedHttpAgent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 }),
  'https:': new PinnedHttpsAgent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 }),
};

type LookupAnswer = { address: string; family: number };
type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAnswer[], family?: number) => void;

/**
 * A `lookup` that answers only the checked addresses. Node's connect asks for
 * all of them (`all: true`, happy eyeballs, the default since Node 20) or for
 * one of a family; both are answered from the checked list, never from DNS.
 */
export function pinnedLookup(addresses: readonly string[]) {
  const answers: LookupAnswer[] = addresses.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
  return (hostname: string, options: { family?: number | string; all?: boolean }, cb: LookupCallback): void => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    const usable = family === 4 || family === 6 ? answers.filter((a) => a.family === family) : answers;
    if (usable.length === 0) {
      const err: NodeJS.ErrnoException = new Error(`${hostname} has no checked IPv${family} address`);
      err.code = 'ENOTFOUND';
      return cb(err, options.all ? [] : '', undefined);
    }
    if (options.all) cb(null, usable);
    else cb(null, usable[0]!.address, usable[0]!.family);
  };
}

export interface SignedDelivery {
  url: string;
  secret: string;
  eventId: string;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  now?: number;
  /** Sent as the W3C `traceparent` header, so a receiver that traces joins the message's trace. */
  traceparent?: string;
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` under the application's callback secret. */
export function signature(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export interface DeliveryOptions {
  /** How host names are resolved (default: the system resolver, answers kept 30 s). */
  resolve?: ResolveHost;
}

/**
 * POSTs one callback. Resolves on a 2xx answer; otherwise throws a HermodError
 * (retryable unless the URL itself is refused). Credentials in the URL become
 * Basic authentication; the connection goes only to addresses that passed the
 * private-address check, so DNS cannot be switched in between.
 */
export async function deliverCallback(d: SignedDelivery, options: DeliveryOptions = {}): Promise<{ status: number; rateLimit?: number }> {
  const url = checkCallbackUrlSyntax(d.url);
  const addresses = await resolveCallbackTarget(url, d.allowPrivate, options.resolve ?? systemResolver);
  const timestamp = Math.floor((d.now ?? Date.now()) / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(d.body)),
    'user-agent': 'hermod-callbacks/1',
    'x-hermod-event-id': d.eventId,
    'x-hermod-signature': signature(d.secret, timestamp, d.body),
  };
  if (d.traceparent) headers.traceparent = d.traceparent;
  if (url.username || url.password) {
    headers.authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
  }
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const requestOptions: PinnedOptions = {
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers,
      agent: url.protocol === 'https:' ? AGENTS['https:'] : AGENTS['http:'],
      timeout: d.timeoutMs,
      lookup: pinnedLookup(addresses) as unknown as net.LookupFunction,
      pinned: [...addresses].sort().join(','),
    };
    const req = lib.request(requestOptions, (res) => {
      res.resume();
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        const limit = Number(res.headers['x-ratelimit-limit']);
        if (status >= 200 && status < 300) resolve({ status, rateLimit: Number.isFinite(limit) ? limit : undefined });
        else reject(new HermodError('unavailable', `callback receiver answered ${status}`, { retryable: true }));
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${d.timeoutMs} ms`)));
    req.on('error', (err) => reject(new HermodError('unavailable', `callback failed: ${err.message}`, { retryable: true, cause: err })));
    req.end(d.body);
  });
}
