import type http from 'node:http';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface ClosingServer {
  /** The server's request handler, wrapped: once closing, every response says `Connection: close`. */
  handle(handler: Handler): Handler;
  /** Stops accepting connections and resolves once every connection has closed. */
  close(server: http.Server): Promise<void>;
}

/** How often idle connections are closed while the server drains. */
const IDLE_SWEEP_MS = 50;

/**
 * A graceful stop for a server with kept-alive clients. `server.close()`
 * alone closes only the connections idle at that moment: a client that
 * sends its next request as soon as the last is answered keeps its
 * connection busy, and the stop waited until its grace ran out and the
 * process exited under it, resetting requests half-way. Here each response
 * whose head leaves after the stop says `Connection: close` (the requests on
 * their way are answered, and their clients know to go elsewhere), and a connection that
 * goes idle after a response begun before the stop is closed within
 * `IDLE_SWEEP_MS`.
 */
export function createClosingServer(): ClosingServer {
  let closing = false;
  /** Responses begun before the stop and not done: those whose head has not left are told to close too. */
  const underWay = new Set<http.ServerResponse>();
  const done = function (this: http.ServerResponse): void {
    underWay.delete(this);
  };
  return {
    handle: (handler) => (req, res) => {
      if (closing) res.setHeader('connection', 'close');
      else {
        underWay.add(res);
        res.on('close', done); // emitted once; `on` takes the shared function without a wrapper
      }
      handler(req, res);
    },
    close: (server) =>
      new Promise((resolve) => {
        closing = true;
        for (const res of underWay) if (!res.headersSent) res.setHeader('connection', 'close');
        const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
