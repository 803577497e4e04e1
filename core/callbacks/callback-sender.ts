import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { HermodError } from '../../lib/errors';
import { checkCallbackUrlSyntax, resolveCallbackTarget } from './callback-url';

/**
 * Connections to receivers are kept and reused: a busy application gets
 * thousands of callbacks a second, and a new TCP (and TLS) connection for each
 * would cost more than the callback itself.
 */
const AGENTS = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 }),
};

export interface SignedDelivery {
  url: string;
  secret: string;
  eventId: string;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  now?: number;
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` under the application's callback secret. */
export function signature(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * POSTs one callback. Resolves on a 2xx answer; otherwise throws a HermodError
 * (retryable unless the URL itself is refused). Credentials in the URL become
 * Basic authentication; the connection goes to the address that passed the
 * private-address check, so DNS cannot be switched in between.
 */
export async function deliverCallback(d: SignedDelivery): Promise<{ status: number; rateLimit?: number }> {
  const url = checkCallbackUrlSyntax(d.url);
  const address = await resolveCallbackTarget(url, d.allowPrivate);
  const timestamp = Math.floor((d.now ?? Date.now()) / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(d.body)),
    'user-agent': 'hermod-callbacks/1',
    'x-hermod-event-id': d.eventId,
    'x-hermod-signature': signature(d.secret, timestamp, d.body),
  };
  if (url.username || url.password) {
    headers.authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
  }
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        agent: url.protocol === 'https:' ? AGENTS['https:'] : AGENTS['http:'],
        timeout: d.timeoutMs,
        lookup: (_host, _opts, cb) => (cb as (err: null, address: string, family: number) => void)(null, address, net.isIPv6(address) ? 6 : 4),
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const limit = Number(res.headers['x-ratelimit-limit']);
          if (status >= 200 && status < 300) resolve({ status, rateLimit: Number.isFinite(limit) ? limit : undefined });
          else reject(new HermodError('unavailable', `callback receiver answered ${status}`, { retryable: true }));
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${d.timeoutMs} ms`)));
    req.on('error', (err) => reject(new HermodError('unavailable', `callback failed: ${err.message}`, { retryable: true, cause: err })));
    req.end(d.body);
  });
}
