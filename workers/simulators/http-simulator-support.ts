import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';

/**
 * What the HTTP carrier simulators (WhatsApp, RCS, MMS) share: a small JSON
 * server, a webhook poster that retries and trusts self-signed certificates
 * (the gateway's default), cancellable delays, and a webhook receiver to point
 * them at in tests and local runs.
 */

export interface JsonRequest {
  method: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  /** The parsed body; undefined when it was empty or not JSON. */
  body: unknown;
  /** The body as sent (a form-encoded OAuth token request, say). */
  rawBody: Buffer;
}

export interface JsonResponse {
  status: number;
  body?: unknown;
}

export interface JsonServer {
  start(): Promise<{ port: number }>;
  stop(): Promise<void>;
  readonly port: number;
}

const MAX_BODY_BYTES = 1024 * 1024;

export function createJsonServer(host: string, port: number, handle: (req: JsonRequest) => JsonResponse | Promise<JsonResponse>): JsonServer {
  let boundPort = port;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reply(res, { status: 413, body: { error: 'body too large' } });
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const request: JsonRequest = {
        method: req.method ?? 'GET',
        url: new URL(req.url ?? '/', 'http://simulator'),
        headers: req.headers,
        body: parseJson(rawBody),
        rawBody,
      };
      Promise.resolve()
        .then(() => handle(request))
        .then(
          (answer) => reply(res, answer),
          (err: unknown) => reply(res, { status: 500, body: { error: String(err) } }),
        );
    });
  });
  return {
    get port() {
      return boundPort;
    },
    async start() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        // Exclusive: a cluster worker under `hermod start` binds its own port (port 0 shared through the primary would collide).
        server.listen({ port: boundPort, host, exclusive: true }, () => {
          server.off('error', reject);
          resolve();
        });
      });
      boundPort = (server.address() as AddressInfo).port;
      return { port: boundPort };
    },
    async stop() {
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

function reply(res: http.ServerResponse, answer: JsonResponse): void {
  if (res.headersSent) return;
  const payload = answer.body === undefined ? '' : JSON.stringify(answer.body);
  res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

export interface WebhookPoster {
  /** Posts `body`, retrying with backoff; resolves with whether a 2xx answer came back. */
  post(url: string, body: Buffer, headers: Record<string, string>): Promise<{ ok: boolean; error: string }>;
  close(): void;
}

/**
 * Posts webhooks over HTTP or HTTPS. Certificates are not checked: the
 * gateway's default is a self-signed one, and this is a simulator.
 *
 * Like the providers it stands for (Meta retries a webhook for up to 7 days,
 * Pub/Sub pushes RBM's until acknowledged), it keeps trying a webhook the
 * receiver did not take, with backoff doubling from `backoffMs` up to
 * `maxBackoffMs`, for `retryForMs` (default 2 minutes; `attempts` caps the
 * tries when given): a hermod restarting gets the reports of its first minutes.
 */
export function createWebhookPoster(
  options: { attempts?: number; timeoutMs?: number; backoffMs?: number; maxBackoffMs?: number; retryForMs?: number } = {},
): WebhookPoster {
  const attempts = options.attempts ?? Number.POSITIVE_INFINITY;
  const timeoutMs = options.timeoutMs ?? 5000;
  const backoffMs = options.backoffMs ?? 100;
  const maxBackoffMs = options.maxBackoffMs ?? 5000;
  const retryForMs = options.retryForMs ?? 120_000;
  const httpAgent = new http.Agent({ keepAlive: true });
  const httpsAgent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });
  let closed = false;

  const once = (url: URL, body: Buffer, headers: Record<string, string>): Promise<number> =>
    new Promise((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const req = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? httpsAgent : httpAgent,
        headers: { 'content-type': 'application/json', 'content-length': body.length, ...headers },
        timeout: timeoutMs,
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(body);
    });

  return {
    async post(target, body, headers) {
      const url = new URL(target);
      const giveUpAt = Date.now() + retryForMs;
      let error = '';
      for (let attempt = 1; attempt <= attempts && !closed; attempt++) {
        try {
          const status = await once(url, body, headers);
          if (status >= 200 && status < 300) return { ok: true, error: '' };
          error = `HTTP ${status}`;
        } catch (err) {
          error = err instanceof Error ? err.message : String(err);
        }
        const wait = Math.min(maxBackoffMs, backoffMs * 2 ** Math.min(attempt - 1, 20));
        if (attempt >= attempts || Date.now() + wait > giveUpAt) break;
        await new Promise((r) => setTimeout(r, wait).unref());
      }
      return { ok: false, error };
    },
    close() {
      closed = true;
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

/** Delays that `cancel()` drops (their continuations never run), so a stopped simulator posts nothing more. */
export function createDelays() {
  const timers = new Set<NodeJS.Timeout>();
  let cancelled = false;
  return {
    sleep(ms: number): Promise<void> {
      return new Promise((resolve) => {
        if (cancelled) return;
        const t = setTimeout(
          () => {
            timers.delete(t);
            resolve();
          },
          Math.max(0, ms),
        );
        timers.add(t);
      });
    },
    get cancelled() {
      return cancelled;
    },
    cancel() {
      cancelled = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}

/** How many taken messages a simulator keeps in `received` (oldest dropped), so a long run stays bounded. */
export const MAX_KEPT_MESSAGES = 10_000;

export function keep<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > MAX_KEPT_MESSAGES) list.splice(0, list.length - MAX_KEPT_MESSAGES);
}

export const randomId = (bytes = 12): string => randomBytes(bytes).toString('hex');

/** The last digit of a number, which picks a simulated outcome. */
export const lastDigit = (destination: string): string => destination.trim().slice(-1);

export const bearerToken = (headers: http.IncomingHttpHeaders): string => /^Bearer (.+)$/i.exec(headers.authorization ?? '')?.[1] ?? '';

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface ReceivedWebhook {
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: Buffer;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Posts answered 503 so far. */
  readonly refused: number;
  /** Answers the next `n` posts with 503 (to exercise retries). */
  refuseNext(n: number): void;
  close(): Promise<void>;
}

/** A webhook endpoint on 127.0.0.1:0, named by host name (localhost), HTTPS with a fresh self-signed certificate unless `tls: false`. */
export async function startWebhookReceiver(options: { tls?: boolean } = {}): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let refusing = 0;
  let refused = 0;
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (refusing > 0) {
        refusing--;
        refused++;
        res.writeHead(503).end();
        return;
      }
      received.push({ path: req.url ?? '/', headers: req.headers, rawBody: Buffer.concat(chunks) });
      res.writeHead(200).end();
    });
  };
  const tls = options.tls ?? true;
  let server: http.Server | https.Server;
  if (tls) {
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048, algorithm: 'sha256' });
    server = https.createServer({ key: pems.private, cert: pems.cert }, onRequest);
  } else {
    server = http.createServer(onRequest);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://localhost:${port}/webhooks`,
    received,
    get refused() {
      return refused;
    },
    refuseNext(n) {
      refusing = n;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
