import http, { STATUS_CODES, type IncomingMessage, type RequestListener } from 'node:http';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { ERROR_CODES, HermodError } from '../../lib/errors';
import { httpRequests } from '../../lib/metrics';
import { mergedSlashes } from './merge-slashes';
import { expectationRefusal, headProblem } from './head-checks';

/** One interface's error renderer, as the app mounts it, for answers made outside Koa. */
export interface InterfaceErrors {
  /** Its name in the request metrics' `interface` label. */
  name?: string;
  prefix: string;
  errors: Middleware;
}

/** Largest request head (request line and headers) the gateway takes. */
export const HEADER_LIMIT = 16 * 1024;
/**
 * Node's parser limit on the gateway's servers (`maxHeaderSize`): above the
 * gateway's own, so a head between the two reaches `withHeaderLimit` and gets
 * its interface's error shape. Above this, the parser refuses it first
 * (`answerHeaderOverflow`).
 */
export const PARSER_HEADER_LIMIT = 64 * 1024;

/** An answer made outside Koa: status, headers and body. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A request line's method and path (only as much of it as names a route); a chunk that begins elsewhere gives nothing. */
const REQUEST_LINE = /^(?:\r?\n)?([A-Z]{3,7}) (\/[^ ?#\r\n]*)/;

/** What Node itself answers to the other client errors (lib/_http_server.js), kept as it was. */
const NODE_ANSWERS: Record<string, number> = { HPE_CHUNK_EXTENSIONS_OVERFLOW: 413, ERR_HTTP_REQUEST_TIMEOUT: 408 };

/** How long a refused connection may take to read the answer and close before it is cut. */
const CLOSE_GRACE_MS = 5_000;

const refusal = (): HermodError => new HermodError('headers_too_large', `request headers are larger than ${HEADER_LIMIT} bytes`);

/**
 * Bytes of a parsed request's head as it came (Node keeps header names and
 * values as latin1, a byte a character). The gateway's servers keep every
 * field (`maxHeadersCount` 0: PARSER_HEADER_LIMIT bounds them), so none goes
 * unmeasured: Node 20 keeps only its first thousand by default, and Node 24
 * refuses a head of more in its parser.
 */
function headBytes(req: IncomingMessage): number {
  let bytes = (req.method?.length ?? 0) + (req.url?.length ?? 0) + 13; // ' ', ' HTTP/1.1', CRLF
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i++) bytes += raw[i]!.length + 2; // ': ' after a name, CRLF after a value
  return bytes + 2;
}

/**
 * The gateway's request listener: a request whose head is over HEADER_LIMIT
 * is answered 431, one with a head problem (head-checks.ts: no Host, a
 * transfer coding besides chunked) 400 or 501, in the error shape of the
 * interface under its path (plain text outside every interface), and its
 * connection closed; every other request goes to `next`.
 */
export function withHeadChecks(interfaces: readonly InterfaceErrors[], next: RequestListener): RequestListener {
  return (req, res) => {
    const problem = headBytes(req) > HEADER_LIMIT ? refusal() : headProblem(req);
    if (!problem) return next(req, res);
    refuseRequest(interfaces, req, res, problem);
  };
}

/** Answers `err` to a request Koa never sees, in its interface's shape, and closes the connection; the rest of the body is not read. */
function refuseRequest(interfaces: readonly InterfaceErrors[], req: IncomingMessage, res: http.ServerResponse, err: HermodError): void {
  const path = (req.url ?? '/').replace(/[?#].*$/, '');
  counted(interfaces, req.method ?? 'GET', path, err);
  void answerFor(interfaces, req.method ?? 'GET', path, err).then((a) => {
    res.writeHead(a.status, { ...a.headers, 'content-length': String(Buffer.byteLength(a.body)), connection: 'close' });
    res.end(a.body);
  });
  req.resume();
}

/**
 * A head over PARSER_HEADER_LIMIT is refused by Node's parser before any
 * listener sees the request, with a 431 and no body. This answers that 431
 * in the interface's error shape when the chunk the parser failed on begins
 * the request (`rawPacket`) or the request is its connection's first, else
 * in plain text, then closes the connection. Every other request the parser
 * refuses (Content-Length with Transfer-Encoding, a folded header, a raw
 * non-ASCII path) is answered 400 the same way, saying what was wrong, where
 * Node answered an empty 400. Other client errors are answered as Node does.
 */
export function answerHeaderOverflow(server: http.Server, interfaces: readonly InterfaceErrors[]): void {
  // A request without Host reaches withHeadChecks, which answers it in the interface's shape, not Node's empty 400.
  (server as http.Server & { requireHostHeader: boolean }).requireHostHeader = false;
  // An Expect the gateway does not meet: answered 417 in the interface's shape, where Node answered an empty one.
  server.on('checkExpectation', (req: IncomingMessage, res: http.ServerResponse) => refuseRequest(interfaces, req, res, expectationRefusal(req)));
  const answered = new WeakSet<Duplex>();
  // The start of each connection's first request: over TLS the parser fails on a later record (16 KB at most) than
  // the one with the request line, which still names the interface (a connection's later requests go without it).
  const firstChunks = new WeakMap<Duplex, string>();
  server.on(server instanceof tls.Server ? 'secureConnection' : 'connection', (socket: Duplex) => {
    socket.once('data', (chunk: Buffer) => firstChunks.set(socket, chunk.toString('latin1', 0, Math.min(chunk.length, 1024))));
  });
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer; reason?: string }, socket: Duplex) => {
    if (answered.has(socket)) return; // the parser fails again on each later chunk
    answered.add(socket);
    // As Node does: no answer into the middle of a response already under way.
    const inFlight = (socket as Duplex & { _httpMessage?: http.ServerResponse | null })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const code = err.code ?? '';
    if (!code.startsWith('HPE_') || NODE_ANSWERS[code] !== undefined) {
      const status = NODE_ANSWERS[code] ?? 400;
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
      socket.destroy();
      return;
    }
    // The parser refused the request: answered in the error shape of the interface its request line names, if it names one.
    const refused = code === 'HPE_HEADER_OVERFLOW' ? refusal() : malformed(code, err.reason);
    const start = requestStart(err.rawPacket?.toString('latin1', 0, Math.min(err.rawPacket.length, 1024))) ?? requestStart(firstChunks.get(socket));
    counted(interfaces, start?.method ?? 'unknown', start?.path, refused);
    const answer = start ? answerFor(interfaces, start.method, start.path, refused) : Promise.resolve(plainAnswer(refused));
    void answer.then((a) => {
      if (socket.destroyed) return;
      const hsts = server instanceof tls.Server ? { 'strict-transport-security': 'max-age=31536000' } : {};
      const head = Object.entries({ ...hsts, ...a.headers, 'content-length': String(Buffer.byteLength(a.body)), connection: 'close' })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      socket.end(`HTTP/1.1 ${a.status} ${STATUS_CODES[a.status]}\r\n${head}\r\n${a.body}`);
      // Nothing more is read from it; the client has a moment to read the answer and close, as Connection: close asks.
      socket.pause();
      const cut = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
      cut.unref();
      socket.once('close', () => clearTimeout(cut));
    });
  });
}

function requestStart(head: string | undefined): { method: string; path: string } | undefined {
  if (!head) return undefined;
  const match = REQUEST_LINE.exec(head);
  return match ? { method: match[1]!, path: match[2]! } : undefined;
}

/** An answer made here never reaches Koa's request metrics: it is counted as they count, under its interface when its path is known. */
function counted(interfaces: readonly InterfaceErrors[], method: string, path: string | undefined, err: HermodError = refusal()): void {
  const iface = path === undefined ? undefined : interfaceOf(interfaces, path);
  httpRequests.inc({ interface: iface?.name ?? 'none', route: 'unmatched', method, status: String(ERROR_CODES[err.code].http) });
}

/** What to do about some of the parser's findings, after its own words (`reason`, e.g. `Duplicate Content-Length`). */
const HINTS: Record<string, string> = {
  HPE_INVALID_URL: 'characters outside ASCII in a path must be percent-encoded',
  HPE_INVALID_TRANSFER_ENCODING: 'send either Content-Length or Transfer-Encoding: chunked',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'send Content-Length once',
  HPE_INVALID_HEADER_TOKEN: 'a header field must be one line, its name letters, digits and -',
};

function malformed(code: string, reason: string | undefined): HermodError {
  const hint = HINTS[code];
  return new HermodError('invalid_attrib', `the request is not valid HTTP/1.1: ${reason || code}${hint ? ` (${hint})` : ''}`);
}

/** The interface under `path`, repeated slashes counting as one (merge-slashes.ts, for what Koa answers). */
function interfaceOf(interfaces: readonly InterfaceErrors[], path: string): InterfaceErrors | undefined {
  const merged = mergedSlashes(path);
  return interfaces.find((i) => merged === i.prefix || merged.startsWith(i.prefix + '/'));
}

/** The 431 of the interface under `path`, or a plain text one outside every interface. */
function answerFor(interfaces: readonly InterfaceErrors[], method: string, path: string, err: HermodError = refusal()): Promise<Answer> {
  // The request's headers are what overflowed, or could not be read: none is read.
  return interfaceAnswer(interfaces, method, path, () => '', err).then(
    (a) => a ?? plainAnswer(err),
    () => plainAnswer(err),
  );
}

/**
 * `err` as the interface under `path` answers it, made by its own error
 * middleware on a stand-in for the Koa context it reads (`header` gives the
 * request's headers it asks for); nothing outside every interface.
 */
export async function interfaceAnswer(
  interfaces: readonly InterfaceErrors[],
  method: string,
  path: string,
  header: (name: string) => string,
  err: HermodError,
): Promise<Answer | undefined> {
  const iface = interfaceOf(interfaces, path);
  if (!iface) return undefined;
  const headers: Record<string, string> = {};
  const ctx = {
    method,
    path: mergedSlashes(path),
    status: 404,
    body: undefined as unknown,
    type: '',
    get: header,
    set: (name: string, value: string) => void (headers[name.toLowerCase()] = value),
  };
  await iface.errors(ctx as unknown as Context, () => Promise.reject(err));
  if (typeof ctx.body === 'string') return { status: ctx.status, headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' }, body: ctx.body };
  return { status: ctx.status, headers: { ...headers, 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(ctx.body) };
}

function plainAnswer(err: HermodError = refusal()): Answer {
  return { status: ERROR_CODES[err.code].http, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: `${err.message}\n` };
}
