import type http from 'node:http';
import { outsideErrorBody } from './outside-errors';
import { timesSent } from './times-sent';

/**
 * A Host header as RFC 9110 has it: a name, an IPv4 address or a bracketed IPv6 one, and perhaps a port. Labels
 * may hold `_` (Docker Compose's service names are such), which DNS names do not but hosts files do.
 */
const HOST = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})?)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** The host (without its port) of a Host header that is one, else undefined. */
export function hostOf(header: string | undefined): string | undefined {
  if (!header || header.length > 255 || !HOST.test(header)) return undefined;
  return header.replace(/:\d+$/, '');
}

/**
 * Answers a plain-HTTP request with a 308 to the same path over HTTPS on
 * `httpsPort`, at the host the client asked for. A request whose Host is not
 * one (empty, two of them, `evil.com/x?`), or whose target is not a path (an
 * absolute URL, `*`), is answered 400: the Location is built from both, and
 * RFC 9112 asks 400 for a missing or repeated Host. Returns the status sent.
 */
export function redirectToHttps(req: http.IncomingMessage, res: http.ServerResponse, httpsPort: number): number {
  const host = timesSent(req.rawHeaders, 'host') === 1 ? hostOf(req.headers.host) : undefined;
  const target = req.url ?? '';
  if (host === undefined || !target.startsWith('/') || target.startsWith('//')) {
    // In the JSON of a refusal outside every interface, as a request without Host is answered here.
    const body = JSON.stringify(outsideErrorBody(400, 'a Host header naming a host, and a path, are required'));
    res.writeHead(400, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' }).end(body);
    return 400;
  }
  const location = `https://${host}${httpsPort === 443 ? '' : `:${httpsPort}`}${target}`;
  res.writeHead(308, { location, 'content-type': 'text/plain' }).end(`use ${location}\n`);
  return 308;
}
