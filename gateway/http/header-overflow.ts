import http, { STATUS_CODES } from 'node:http';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { HermodError } from '../../lib/errors';

/** One interface's error renderer, as the app mounts it, for answers made outside Koa. */
export interface InterfaceErrors {
  prefix: string;
  errors: Middleware;
  /** The routes whose errors are plain text (Campaign Manager's deletes and healthz); the routes mark them inside Koa. */
  plainErrors?: (method: string, path: string) => boolean;
}

interface RequestStart {
  method: string;
  path: string;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What Node itself answers to the other client errors (lib/_http_server.js), kept as it was. */
const NODE_ANSWERS: Record<string, number> = { HPE_CHUNK_EXTENSIONS_OVERFLOW: 413, ERR_HTTP_REQUEST_TIMEOUT: 408 };

/** A request line's method and path (only as much of it as names a route); a chunk that begins elsewhere gives nothing. */
const REQUEST_LINE = /^(?:\r?\n)?([A-Z]{3,7}) (\/[^ ?#\r\n]*)/;

/** How long a refused connection may take to read the answer and close before it is cut. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Headers larger than Node's limit (16 KB) are refused by Node's parser
 * before Koa sees the request, with a 431 and no body. This answers that 431
 * (then closes the connection) with the body the interface under the request
 * path gives every error, or a plain text one when the path is unknown or
 * outside every interface.
 *
 * The path comes from the request line: in the chunk the parser failed on
 * (err.rawPacket) when the request started there, else in the first chunk of
 * the request as the socket read it. Over TLS (the gateway's port) each chunk
 * is seen; on a plain HTTP port Node's parser reads the socket itself, so only
 * rawPacket is known there. Other client errors are answered as Node does.
 */
export function answerHeaderOverflow(server: http.Server, interfaces: readonly InterfaceErrors[]): void {
  const starts = new WeakMap<Duplex, RequestStart>();
  const answered = new WeakSet<Duplex>();

  // https.Server hands the HTTP parser the TLS socket on secureConnection; a plain server on connection.
  server.on(server instanceof tls.Server ? 'secureConnection' : 'connection', (socket: Duplex) => {
    socket.prependListener('data', (chunk: Buffer) => {
      const start = requestStart(chunk);
      if (start) starts.set(socket, start);
    });
  });

  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    if (answered.has(socket)) return; // the parser fails again on each later chunk
    answered.add(socket);
    // As Node: no answer into the middle of a response already under way.
    const inFlight = (socket as Duplex & { _httpMessage?: http.ServerResponse | null })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    if (err.code !== 'HPE_HEADER_OVERFLOW') {
      const status = NODE_ANSWERS[err.code ?? ''] ?? 400;
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
      socket.destroy();
      return;
    }
    // The gateway's servers keep Node's limit (--max-http-header-size, 16 KB unless set).
    const refusal = new HermodError('headers_too_large', `request headers are larger than ${http.maxHeaderSize} bytes`);
    const start = requestStart(err.rawPacket) ?? starts.get(socket);
    const iface = start && interfaces.find((i) => start.path === i.prefix || start.path.startsWith(i.prefix + '/'));
    const answer = iface ? renderError(iface, start, refusal) : Promise.resolve(plainAnswer(refusal));
    void answer
      .catch(() => plainAnswer(refusal))
      .then((a) => {
        if (socket.destroyed) return;
        const hsts = server instanceof tls.Server ? { 'strict-transport-security': 'max-age=31536000' } : {};
        const head = Object.entries({ ...hsts, ...a.headers, 'content-length': String(Buffer.byteLength(a.body)), connection: 'close' })
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('');
        socket.end(`HTTP/1.1 ${a.status} ${STATUS_CODES[a.status]}\r\n${head}\r\n${a.body}`);
        setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
      });
  });
}

function requestStart(chunk: Buffer | undefined): RequestStart | undefined {
  if (!chunk || chunk.length === 0) return undefined;
  const first = chunk[0]!;
  // Most chunks are a body's or a header's middle: only a capital letter (or CRLF) can begin a request line.
  if (!((first >= 0x41 && first <= 0x5a) || first === 0x0d || first === 0x0a)) return undefined;
  const match = REQUEST_LINE.exec(chunk.toString('latin1', 0, Math.min(chunk.length, 1024)));
  return match ? { method: match[1]!, path: match[2]! } : undefined;
}

/** The interface's error answer, made by its own error middleware on a stand-in for the Koa context it reads. */
async function renderError(iface: InterfaceErrors, start: RequestStart, err: HermodError): Promise<Answer> {
  const headers: Record<string, string> = {};
  const ctx = {
    method: start.method,
    path: start.path,
    status: 404,
    body: undefined as unknown,
    type: '',
    state: { plainErrors: iface.plainErrors?.(start.method, start.path) ?? false },
    set: (name: string, value: string) => void (headers[name.toLowerCase()] = value),
  };
  await iface.errors(ctx as unknown as Context, () => Promise.reject(err));
  if (typeof ctx.body === 'string') return { status: ctx.status, headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' }, body: ctx.body };
  return { status: ctx.status, headers: { ...headers, 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(ctx.body) };
}

function plainAnswer(err: HermodError): Answer {
  return { status: err.httpStatus, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: `${err.message}\n` };
}
