import { createHmac } from 'node:crypto';
import net from 'node:net';
import { Pool } from 'undici';
import { HermodError } from '../../lib/errors';
import { FifoMap } from '../../lib/fifo-map';
import { cachedResolver } from './cached-resolver';
import { checkCallbackUrlSyntax, resolveCallbackTarget, resolveWithSystem, type ResolveHost } from './callback-url';

/** The system resolver's answers, kept 30 s: one lookup per receiver name, not one per callback. */
const systemResolver = cachedResolver(resolveWithSystem, { ttlMs: 30_000 });

/**
 * Connections to receivers are kept and reused, in one undici pool per
 * receiver origin and checked DNS answer: a busy application gets thousands
 * of callbacks a second, and a new TCP (and TLS) connection for each would
 * cost more than the callback itself. undici spends a third of the CPU per
 * request that node:http's client and agent did (bench/RESULTS.md, fifth
 * session). A pooled connection must still go to an address the current DNS
 * answer holds and that was checked with it, so the answer is part of the
 * key: a name that now answers other addresses gets a new pool, which
 * connects only to those.
 */
const MAX_CONNECTIONS_PER_RECEIVER = 256;
const MAX_POOLS = 1000;
const pools = new FifoMap<string, Pool>();

/**
 * A new connection (TCP and TLS handshake) gets the callback's timeout too, as
 * the node:http socket timeout gave it, not undici's own 10 s.
 */
function poolFor(url: URL, addresses: readonly string[], timeoutMs: number): Pool {
  const key = `${url.origin}|${timeoutMs}|${[...addresses].sort().join(',')}`;
  let pool = pools.get(key);
  if (pool) return pool;
  pool = new Pool(url.origin, {
    connections: MAX_CONNECTIONS_PER_RECEIVER,
    pipelining: 1,
    connect: { lookup: pinnedLookup(addresses) as unknown as net.LookupFunction, timeout: timeoutMs },
  });
  pools.set(key, pool);
  while (pools.size > MAX_POOLS) {
    const oldest = pools.oldestKey()!;
    // Requests already on it finish; it takes no new ones.
    void pools
      .get(oldest)!
      .close()
      .catch(() => undefined);
    pools.delete(oldest);
  }
  return pool;
}

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

/**
 * A receiver (or a proxy before it) that closes kept-alive connections after
 * a short idle, without a Keep-Alive hint, can close one just as a callback
 * goes out on it: the callback fails with no answer. That one is sent once
 * more at once, on another connection, rather than counted as a failed try.
 * The receiver may have seen it; callbacks are at least once (event id).
 */
function closedUnderfoot(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

/**
 * What went wrong, with the error's code when its message does not say it
 * (a TLS error's ERR_TLS_CERT_ALTNAME_INVALID, undici's UND_ERR_HEADERS_TIMEOUT):
 * the code is what an operator looks up. A failed connect to every address of
 * a name is an AggregateError without a message of its own: its first says why.
 */
function failureReason(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; errors?: unknown };
  const first = Array.isArray(e.errors) ? (e.errors[0] as { message?: unknown } | undefined) : undefined;
  const message = typeof e.message === 'string' && e.message ? e.message : typeof first?.message === 'string' ? first.message : String(err);
  const code = typeof e.code === 'string' ? e.code : '';
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

export interface SignedDelivery {
  url: string;
  secret: string;
  /** A secret that signs beside `secret` (a second `v1`), while receivers move to the new one. */
  previousSecret?: string;
  eventId: string;
  /** When what the callback tells happened (epoch ms), sent as `X-Hermod-Event-Time`: a retry after an outage comes hours later. */
  eventAt?: number;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  now?: number;
  /** Sent as the W3C `traceparent` header, so a receiver that traces joins the message's trace. */
  traceparent?: string;
}

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` under the
 * application's callback secret, and a second `v1` under the secret it
 * replaced while that still signs (as Stripe signs during a secret's roll).
 */
export function signature(secret: string, timestamp: number, body: string, previousSecret?: string): string {
  const v1 = (key: string) => createHmac('sha256', key).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${v1(secret)}${previousSecret ? `,v1=${v1(previousSecret)}` : ''}`;
}

export interface DeliveryOptions {
  /** How host names are resolved (default: the system resolver, answers kept 30 s). */
  resolve?: ResolveHost;
}

/**
 * POSTs one callback. Resolves on a 2xx answer; otherwise throws a HermodError
 * (retryable unless the URL itself is refused or the receiver answers 410
 * Gone; with the seconds of a 429's or 503's Retry-After). Credentials in the URL become
 * Basic authentication; the connection goes only to addresses that passed the
 * private-address check, so DNS cannot be switched in between.
 */
export async function deliverCallback(d: SignedDelivery, options: DeliveryOptions = {}): Promise<{ status: number; rateLimit?: number }> {
  const url = checkCallbackUrlSyntax(d.url);
  const addresses = await resolveCallbackTarget(url, d.allowPrivate, options.resolve ?? systemResolver);
  const timestamp = Math.floor((d.now ?? Date.now()) / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'hermod-callbacks/1',
    'x-hermod-event-id': d.eventId,
    ...(d.eventAt !== undefined && Number.isFinite(d.eventAt) && d.eventAt > 0 ? { 'x-hermod-event-time': new Date(d.eventAt).toISOString() } : {}),
    'x-hermod-signature': signature(d.secret, timestamp, d.body, d.previousSecret),
  };
  if (d.traceparent) headers.traceparent = d.traceparent;
  if (url.username || url.password) {
    headers.authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
  }
  const pool = poolFor(url, addresses, d.timeoutMs);
  const post = () =>
    pool.request({ path: `${url.pathname}${url.search}`, method: 'POST', headers, body: d.body, headersTimeout: d.timeoutMs, bodyTimeout: d.timeoutMs });
  let res: Awaited<ReturnType<Pool['request']>>;
  try {
    res = await post().catch((err: unknown) => (closedUnderfoot(err) ? post() : Promise.reject(err)));
    await res.body.dump();
  } catch (err) {
    throw new HermodError('unavailable', `callback failed: ${failureReason(err)}`, { retryable: true, cause: err });
  }
  const status = res.statusCode;
  const limit = Number(res.headers['x-ratelimit-limit']);
  if (status >= 200 && status < 300) return { status, rateLimit: Number.isFinite(limit) ? limit : undefined };
  // 410: the receiver says this URL is gone for good; tries after it would only be refused for a day.
  if (status === 410) throw new HermodError('unavailable', 'callback receiver answered 410 Gone; not retried', { retryable: false });
  // `RetryAfter` too: the header Intelligent Messaging's own answers use (SPEC), so a receiver built to it may send it.
  const retryAfterSeconds = status === 429 || status === 503 ? retryAfterOf(res.headers['retry-after'] ?? res.headers.retryafter, Date.now()) : undefined;
  throw new HermodError('unavailable', `callback receiver answered ${status}${redirectNote(status, res.headers.location, url)}`, {
    retryable: true,
    retryAfterSeconds,
  });
}

/**
 * Where a 3xx points, for whoever reads the failure (log, `hermod status`): a callback is a signed POST to the URL
 * the operator set, so a redirect is not followed (a 301 or 302 would turn it into a GET, and the signature and
 * credentials would go to a host nobody set). Credentials in the Location are left out.
 */
function redirectNote(status: number, location: string | string[] | undefined, base: URL): string {
  if (status < 300 || status > 399 || typeof location !== 'string' || !location) return '';
  let target: URL;
  try {
    target = new URL(location, base);
  } catch {
    return '';
  }
  target.username = '';
  target.password = '';
  return ` redirecting to ${target.href}: redirects are not followed (set the callback URL to where it points)`;
}

/** The longest Retry-After taken: as long as the longest back-off. */
const MAX_RETRY_AFTER_S = 3600;

/** Retry-After (RFC 9110 §10.2.3) as seconds from now: delay-seconds or an HTTP-date; undefined when it is neither. */
function retryAfterOf(header: string | string[] | undefined, now: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  let seconds: number;
  if (/^\d+$/.test(value)) seconds = Number(value);
  else {
    const at = Date.parse(value);
    if (!Number.isFinite(at) || !/GMT$/.test(value)) return undefined;
    seconds = Math.max(0, Math.ceil((at - now) / 1000));
  }
  return Math.min(seconds, MAX_RETRY_AFTER_S);
}
