import type http from 'node:http';
import type { Socket } from 'node:net';
import tls from 'node:tls';
import { HermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { type InterfaceErrors, interfaceAnswer } from './header-overflow';

/** How long a request's head may take to arrive in full (Node's default, made explicit): what stops a slow-header client. */
export const HEADERS_TIMEOUT_MS = 60_000;

/**
 * How long the gateway waits for a request. Nothing limits a request's whole
 * time: Node 20's `requestTimeout` (300 s by default) cut a list import that
 * kept sending with a bare 408. A client that sends nothing for `idleMs`
 * (HERMOD_REQUEST_IDLE_TIMEOUT) in the middle of a body is answered 408 in
 * its interface's error shape, if nothing of the answer has gone yet, and
 * disconnected — unless body it sent waits unread, when it is hermod that is
 * behind (a busy core taking an import's pages) and the wait starts again,
 * as it does while a request that came whole waits for its answer; a connection idle anywhere else is closed as Node closes it.
 * A head must arrive within HEADERS_TIMEOUT_MS however steadily it trickles.
 */
export function limitRequestTime(server: http.Server, interfaces: readonly InterfaceErrors[], idleMs: number, log: Logger): void {
  server.requestTimeout = 0;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
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
    if (req.readableLength > 0) {
      socket.setTimeout(idleMs);
      return;
    }
    // The handler may have just read what waited, after a wait longer than idleMs, and the client's next bytes
    // (queued in the kernel while the socket was not read) are still on their way: look again in a moment.
    const readBefore = socket.bytesRead;
    setTimeout(
      () => {
        if (socket.destroyed || res.headersSent || req.complete) return;
        if (req.readableLength > 0 || socket.bytesRead > readBefore) socket.setTimeout(idleMs);
        else answerTimedOut(socket, res, req);
      },
      Math.min(1_000, idleMs / 4),
    ).unref();
  });

  const answerTimedOut = (socket: Socket, res: http.ServerResponse, req: http.IncomingMessage): void => {
    const path = (req.url ?? '/').replace(/[?#].*$/, '');
    const method = req.method ?? 'POST';
    const header = (name: string): string => {
      const value = req.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : (value ?? '');
    };
    const err = new HermodError('request_timeout', `the request body stopped arriving: nothing came for ${idleMs / 1000} s`);
    log.info('request body stopped arriving', { method, path, remote: socket.remoteAddress, idleMs });
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
