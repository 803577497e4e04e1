import type http from 'node:http';
import type { Socket } from 'node:net';
import tls from 'node:tls';
import { performance } from 'node:perf_hooks';
import { HermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { type InterfaceErrors, interfaceAnswer } from './header-overflow';
import { awaitsContinue } from './continue-when-read';

/** The start of a body that the minimum rate does not measure (Kestrel's MinRequestBodyDataRate grace period). */
const RATE_GRACE_MS = 5_000;

/** How long a request's head may take to arrive in full (Node's default, made explicit): what stops a slow-header client. */
export const HEADERS_TIMEOUT_MS = 60_000;

/**
 * Node looks for heads past their time only every `connectionsCheckingInterval`
 * (30 s by default), so a head trickled a byte at a time held its connection
 * for up to half as long again as promised (86 s of 60 in a trial). Looking
 * every second (read by Node when the server starts listening) keeps the
 * promise within a second; the redirecting plain server needs it too.
 */
export function limitHeadTime(server: http.Server, headMs: number = HEADERS_TIMEOUT_MS): void {
  server.headersTimeout = headMs;
  (server as http.Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(50, Math.min(1_000, headMs / 4));
}

/** How long a client may take over its TLS handshake (Node's default is 120 s; nginx's 60 s): a silent socket is let go. */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;

/** What a gateway allows a request's body: the idle window, and the slowest average rate once that window has passed. */
export interface RequestTimeLimits {
  /** HERMOD_REQUEST_IDLE_TIMEOUT: the longest silence in the middle of a request. */
  idleMs: number;
  /** HERMOD_REQUEST_MIN_RATE: bytes a second a body must average after its first idle window; 0 sets no rate. */
  minBytesPerSecond: number;
  /** How long a head may take (HEADERS_TIMEOUT_MS unless given: tests shorten it). */
  headMs?: number;
}

/**
 * How long the gateway waits for a request. Nothing limits a request's whole
 * time: Node 20's `requestTimeout` (300 s by default) cut a list import that
 * kept sending with a bare 408. A client that sends nothing for `idleMs`
 * (HERMOD_REQUEST_IDLE_TIMEOUT) in the middle of a body is answered 408 in
 * its interface's error shape, if nothing of the answer has gone yet, and
 * disconnected — unless body it sent waits unread, when it is hermod that is
 * behind (a busy core taking an import's pages) and the wait starts again,
 * as it does while a request that came whole waits for its answer; a connection idle anywhere else is closed as Node closes it.
 * A head must arrive within HEADERS_TIMEOUT_MS however steadily it trickles,
 * and a body, once it has had one idle window, must average
 * `minBytesPerSecond` (as Kestrel's MinRequestBodyDataRate and Apache's
 * mod_reqtimeout ask): a client sending a byte just inside each idle window
 * would otherwise hold its connection for ever. Time in which body waits
 * unread is hermod's, not the client's: the measure starts again after it.
 */
export function limitRequestTime(server: http.Server, interfaces: readonly InterfaceErrors[], limits: RequestTimeLimits, log: Logger): void {
  const { idleMs, minBytesPerSecond, headMs = HEADERS_TIMEOUT_MS } = limits;
  server.requestTimeout = 0;
  limitHeadTime(server, headMs);
  server.setTimeout(idleMs);
  server.on('timeout', (socket: Socket) => {
    const res = (socket as Socket & { _httpMessage?: http.ServerResponse | null })._httpMessage;
    const req = res?.req;
    if (res && req?.complete && !res.headersSent && !res.writableEnded) {
      // The whole request came and hermod is still working on its answer (core slow): not the client's wait to end.
      socket.setTimeout(idleMs);
      return;
    }
    if (!res || !req || req.complete || res.headersSent) {
      socket.destroy();
      return;
    }
    // Body the handler has not read yet: it is hermod that is behind (core slow to take an import's pages), and
    // the client waits on TCP's window, not the other way round. Wait again.
    // The same when the client waits for the 100 Continue hermod has not sent yet (its checks of the head still running).
    if (req.readableLength > 0 || awaitsContinue(req)) {
      socket.setTimeout(idleMs);
      return;
    }
    // The handler may have just read what waited, after a wait longer than idleMs, and the client's next bytes
    // (queued in the kernel while the socket was not read) are still on their way: look again in a moment.
    const readBefore = socket.bytesRead;
    setTimeout(
      () => {
        if (socket.destroyed || res.headersSent || req.complete) return;
        if (req.readableLength > 0 || awaitsContinue(req) || socket.bytesRead > readBefore) socket.setTimeout(idleMs);
        else answerTimedOut(socket, res, req, `the request body stopped arriving: nothing came for ${idleMs / 1000} s`);
      },
      Math.min(1_000, idleMs / 4),
    ).unref();
  });

  // Kestrel's grace: the first 5 s of a body (or its idle window, if shorter) are not measured; without an idle limit, 5 s.
  const graceMs = idleMs > 0 ? Math.min(idleMs, RATE_GRACE_MS) : RATE_GRACE_MS;
  if (minBytesPerSecond > 0)
    watchBodyRate(server, graceMs, minBytesPerSecond, (socket, res, req) =>
      answerTimedOut(socket, res, req, `the request body arrived slower than ${minBytesPerSecond} bytes a second`),
    );

  const answerTimedOut = (socket: Socket, res: http.ServerResponse, req: http.IncomingMessage, message: string): void => {
    const path = (req.url ?? '/').replace(/[?#].*$/, '');
    const method = req.method ?? 'POST';
    const header = (name: string): string => {
      const value = req.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : (value ?? '');
    };
    const err = new HermodError('request_timeout', message);
    log.info(message.startsWith('the request body stopped') ? 'request body stopped arriving' : 'request body arrived too slowly', {
      method,
      path,
      remote: socket.remoteAddress,
      idleMs,
      minBytesPerSecond,
    });
    void interfaceAnswer(interfaces, method, path, header, err)
      .catch(() => undefined)
      .then((answer) => {
        if (socket.destroyed || res.headersSent) return;
        if (!answer) return socket.destroy();
        // The handler still reading the body gets `err` once the answer is out (its renderer can add nothing now), and ends.
        res.once('finish', () => req.destroy(err));
        const hsts = server instanceof tls.Server ? { 'strict-transport-security': 'max-age=31536000' } : {};
        res.writeHead(answer.status, { ...hsts, ...answer.headers, 'content-length': String(Buffer.byteLength(answer.body)), connection: 'close' });
        res.end(answer.body);
      });
  };
}

type HttpSocket = Socket & { _httpMessage?: http.ServerResponse | null };

interface BodyWatch {
  req: http.IncomingMessage;
  since: number;
  bytesAt: number;
  /** socket.bytesRead at the last look. */
  lastBytes: number;
}

/**
 * Looks at every connection once a second (or twice an idle window, if
 * shorter): a request whose body has been arriving for at least `graceMs`
 * at under `minBytesPerSecond` on average, and is still arriving, is
 * answered with `tooSlow`.
 */
function watchBodyRate(
  server: http.Server,
  graceMs: number,
  minBytesPerSecond: number,
  tooSlow: (socket: Socket, res: http.ServerResponse, req: http.IncomingMessage) => void,
): void {
  const sockets = new Map<HttpSocket, BodyWatch | undefined>();
  server.on(server instanceof tls.Server ? 'secureConnection' : 'connection', (socket: HttpSocket) => {
    sockets.set(socket, undefined);
    socket.once('close', () => sockets.delete(socket));
  });
  const look = (): void => {
    // The monotonic clock: a step of the wall clock (NTP, a resumed VM) must not make every upload look slow.
    const now = performance.now();
    for (const [socket, watch] of sockets) {
      const res = socket._httpMessage;
      const req = res?.req;
      if (!res || !req || req.complete || res.headersSent || socket.destroyed) {
        if (watch) sockets.set(socket, undefined);
        continue;
      }
      // Body waiting unread, or a client waiting for 100 Continue (or a new request): hermod's time, or the start; measure from now.
      if (!watch || watch.req !== req || req.readableLength > 0 || awaitsContinue(req)) {
        sockets.set(socket, { req, since: now, bytesAt: socket.bytesRead, lastBytes: socket.bytesRead });
        continue;
      }
      // Nothing since the last look: a body that stopped is the idle timeout's to answer, as "stopped arriving".
      const bytes = socket.bytesRead;
      if (bytes === watch.lastBytes) continue;
      watch.lastBytes = bytes;
      const elapsed = now - watch.since;
      if (elapsed < graceMs) continue;
      if (((bytes - watch.bytesAt) * 1000) / elapsed >= minBytesPerSecond) continue;
      sockets.set(socket, undefined);
      tooSlow(socket, res, req);
    }
  };
  const timer = setInterval(look, Math.max(10, Math.min(1_000, graceMs / 2)));
  timer.unref();
  server.once('close', () => clearInterval(timer));
}
