import { createHash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { ERROR_CODES, toHermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { PACKAGE_ROOT } from '../../lib/build-location';
import { UNAVAILABLE_RETRY_AFTER_S } from '../http/unavailable-retry-after';
import { NotImplementedByCore, type CampaignAction, type ConsoleClient } from './console-client';

const STATIC_DIR = path.join(PACKAGE_ROOT, 'gateway', 'console', 'static');

/** What the console serves as files: the page, its style and its script, all in the package. */
const STATIC: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/console.css': { file: 'console.css', type: 'text/css; charset=utf-8' },
  '/console.js': { file: 'console.js', type: 'text/javascript; charset=utf-8' },
};

/** Asked of every state-changing request: a page of another site cannot set it, so it cannot act with the operator's credentials. */
export const ACTION_HEADER = 'x-hermod-console';

const REALM = 'Basic realm="hermod operator console", charset="UTF-8"';
/** A 503 (core out of reach) says when to ask again, as the gateway's interfaces do. */
const RETRY_LATER = { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_S) };

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Whether an Authorization header carries this user and password (compared in constant time). */
export function basicAuthMatches(header: string | undefined, user: string, password: string): boolean {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m) return false;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  const userOk = timingSafeEqual(digest(decoded.slice(0, colon)), digest(user));
  const passwordOk = timingSafeEqual(digest(decoded.slice(colon + 1)), digest(password));
  return userOk && passwordOk;
}

/**
 * The operator console's HTTP server: the page, and a small JSON API over
 * core's admin API (nothing is kept here; every answer is read from core).
 * Errors are `{"error":{"code","message"}}`.
 */
export function createConsoleServer(deps: { user: string; password: string; client: ConsoleClient; log: Logger }): http.Server {
  const files = new Map(Object.entries(STATIC).map(([route, s]) => [route, { body: fs.readFileSync(path.join(STATIC_DIR, s.file)), type: s.type }]));

  const send = (res: http.ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void => {
    res.writeHead(status, {
      'content-type': type,
      'content-length': String(Buffer.byteLength(body)),
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      ...extra,
    });
    res.end(body);
  };
  const json = (res: http.ServerResponse, status: number, value: unknown): void => send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
  const fail = (res: http.ServerResponse, status: number, code: string, message: string): void =>
    send(res, status, 'application/json; charset=utf-8', JSON.stringify({ error: { code, message } }), status === 503 ? RETRY_LATER : {});

  const api = async (method: string, route: string, req: http.IncomingMessage): Promise<unknown> => {
    if (method === 'GET' && route === '/api/binds') return { binds: await deps.client.binds() };
    if (method === 'GET' && route === '/api/backlog') return { topics: await deps.client.backlog() };
    if (method === 'GET' && route === '/api/callbacks') return { applications: await deps.client.callbacks() };
    if (method === 'GET' && route === '/api/campaigns') return { campaigns: await deps.client.campaigns() };
    const journey = /^\/api\/messages\/([^/]+)$/.exec(route);
    if (method === 'GET' && journey) return deps.client.journey(decodeURIComponent(journey[1]!));
    const action = /^\/api\/campaigns\/([^/]+)\/([^/]+)\/(pause|resume|cancel)$/.exec(route);
    if (action) {
      if (method !== 'POST') throw new HttpProblem(405, 'method_not_allowed', `${route} takes POST`);
      if (req.headers[ACTION_HEADER] !== '1') throw new HttpProblem(403, 'forbidden', `a campaign action needs the ${ACTION_HEADER}: 1 header`);
      return deps.client.campaignAction(action[3] as CampaignAction, decodeURIComponent(action[1]!), decodeURIComponent(action[2]!));
    }
    throw new HttpProblem(404, 'not_found', `no such console resource: ${method} ${route}`);
  };

  return http.createServer((req, res) => {
    // Nothing is read from a body: drain it so the connection stays usable.
    req.resume();
    if (!basicAuthMatches(req.headers.authorization, deps.user, deps.password)) {
      return send(
        res,
        401,
        'text/plain; charset=utf-8',
        'The operator console needs the user and password set in HERMOD_ADMIN_USER and HERMOD_ADMIN_PASSWORD.\n',
        {
          'www-authenticate': REALM,
        },
      );
    }
    const method = req.method ?? 'GET';
    let route: string;
    try {
      route = new URL(req.url ?? '/', 'http://console.localhost').pathname;
      decodeURIComponent(route);
    } catch {
      return fail(res, 400, 'invalid_attrib', 'the request path is not valid');
    }
    const file = files.get(route);
    if (file) {
      if (method !== 'GET' && method !== 'HEAD') return fail(res, 405, 'method_not_allowed', `${route} takes GET`);
      return send(res, 200, file.type, file.body);
    }
    if (!route.startsWith('/api/')) return fail(res, 404, 'not_found', `no such page: ${route}`);
    api(method, route, req).then(
      (value) => json(res, 200, value),
      (err: unknown) => {
        if (err instanceof HttpProblem) return fail(res, err.status, err.code, err.message);
        if (err instanceof NotImplementedByCore) return fail(res, 501, 'unimplemented', err.message);
        const e = toHermodError(err);
        if (e.code === 'internal') deps.log.error('console request failed', { route, err });
        fail(res, ERROR_CODES[e.code].http, e.code, e.message);
      },
    );
  });
}

class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
