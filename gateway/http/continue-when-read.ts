import type http from 'node:http';

/**
 * Answers `Expect: 100-continue` only once the request's body is read. Node
 * answers 100 Continue as soon as the head arrives, so a client announcing a
 * body over the limit was told to send it, then refused 413: a client that
 * waits for 100 Continue (curl for a large upload, many SDKs) sent megabytes
 * for nothing. Now the gateway's checks of the head run first (a body over
 * the limit, a wrong content type, bad credentials are answered without
 * asking for the body), and the first reader of the body (a `data` or
 * `readable` listener: any stream read, async iteration included) asks for it.
 */
export function continueWhenRead(server: http.Server): void {
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    waiting.add(req);
    const onListener = (event: string | symbol): void => {
      if (event !== 'data' && event !== 'readable') return;
      req.off('newListener', onListener);
      waiting.delete(req);
      if (!res.headersSent && !res.writableEnded) res.writeContinue();
    };
    req.on('newListener', onListener);
    server.emit('request', req, res);
  });
}

/** Requests that sent `Expect: 100-continue` and have not been asked for their body yet. */
const waiting = new WeakSet<http.IncomingMessage>();

/** Whether the client waits for hermod's 100 Continue: a body not arriving is then not the client's doing. */
export const awaitsContinue = (req: http.IncomingMessage): boolean => waiting.has(req);
