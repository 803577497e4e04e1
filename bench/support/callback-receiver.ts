import http from 'node:http';

export interface CallbackReceiver {
  port: number;
  /** How long it waits before answering. */
  answerAfterMs: number;
  /** Calls by status, whole run. */
  statuses: Map<string, number>;
  /** TCP connections accepted so far. */
  connections(): number;
  close(): void;
}

/**
 * A bare node:http server that answers 200 at once (or `answerAfterMs` later:
 * a slow receiver) and hands every body, with its arrival time, to `onBody`.
 */
export async function startCallbackReceiver(
  onBody: (path: string, body: string, at: number, headers: http.IncomingHttpHeaders) => void,
  options: { answerAfterMs?: number } = {},
): Promise<CallbackReceiver> {
  const answerAfterMs = options.answerAfterMs ?? 0;
  const statuses = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const at = performance.now();
      if (answerAfterMs > 0) setTimeout(() => res.writeHead(200).end(), answerAfterMs);
      else res.writeHead(200).end();
      onBody(req.url ?? '', body, at, req.headers);
    });
  });
  server.keepAliveTimeout = 65_000;
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    answerAfterMs,
    statuses,
    connections: () => connections,
    close: () => (server.closeAllConnections(), server.close()),
  };
}
