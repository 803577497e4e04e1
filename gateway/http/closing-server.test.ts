import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClosingServer } from './closing-server';

interface Outcome {
  status?: number;
  connection?: string;
  error?: string;
  /** Whether the stop had been asked when the answer (or the error) came. */
  afterStop: boolean;
}

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('a gateway server that stops while clients keep sending on kept-alive connections', () => {
  it('answers the requests already on their way with Connection: close and stops while the clients are still sending', async () => {
    const closing = createClosingServer();
    // A send takes a few milliseconds (core's answer); every response is a 202, kept alive unless told otherwise.
    // While `held`, answers wait: the requests on their way at the stop, one on each connection.
    const held: (() => void)[] = [];
    let holding = false;
    const server = http.createServer(
      { keepAliveTimeout: 65_000 },
      closing.handle((req, res) => {
        req.resume();
        const answer = () => res.writeHead(202, { 'content-type': 'application/json' }).end('{"id":"1"}');
        req.on('end', () => (holding ? held.push(answer) : setTimeout(answer, 5)));
      }),
    );
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;

    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    const outcomes: Outcome[] = [];
    let stopAsked = false;
    let sending = true;
    const send = (): Promise<void> =>
      new Promise((resolve) => {
        const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/rest/sms/v2/messages', agent }, (res) => {
          const afterStop = stopAsked;
          res.resume();
          res.on('end', () => {
            outcomes.push({ status: res.statusCode, connection: res.headers.connection, afterStop });
            resolve();
          });
        });
        req.on('error', (err: NodeJS.ErrnoException) => {
          outcomes.push({ error: err.code, afterStop: stopAsked });
          resolve();
        });
        req.end(JSON.stringify({ destination: '+64211234567', content: 'Kia ora, e hoa mā 👋🏽' }));
      });
    // Four clients, each sending the next request as soon as the last is answered (a load generator).
    const clients = Array.from({ length: 4 }, async () => {
      while (sending) await send();
    });
    await new Promise((r) => setTimeout(r, 200));
    holding = true;
    while (held.length < 4) await new Promise((r) => setTimeout(r, 5));

    stopAsked = true;
    const closed = closing.close(server);
    holding = false;
    for (const answer of held) answer();
    await closed;
    const stoppedWhileSending = sending;
    sending = false;
    await Promise.all(clients);
    agent.destroy();

    expect(stoppedWhileSending).toBe(true);
    // The requests on their way at the stop are answered, and told to close.
    const answeredAfterStop = outcomes.filter((o) => o.afterStop && o.status !== undefined);
    expect(answeredAfterStop).toHaveLength(4);
    expect(answeredAfterStop.every((o) => o.status === 202 && o.connection === 'close')).toBe(true);
    // A request is never cut off half-way: a client that comes back finds the port closed, nothing else.
    expect(outcomes.filter((o) => o.error !== undefined && o.error !== 'ECONNREFUSED')).toEqual([]);
    expect(outcomes.filter((o) => !o.afterStop).every((o) => o.status === 202 && o.connection === 'keep-alive')).toBe(true);
  });

  it('closes a connection whose response was already under way at the stop once that response is done', async () => {
    const closing = createClosingServer();
    let release: () => void = () => undefined;
    const server = http.createServer(
      { keepAliveTimeout: 65_000 },
      closing.handle((req, res) => {
        req.resume();
        // The head goes out at once (kept alive), the body once released: a response under way at the stop.
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('rows ');
        release = () => res.end('end');
      }),
    );
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const agent = new http.Agent({ keepAlive: true });
    const body = new Promise<string>((resolve, reject) => {
      http
        .get({ port, host: '127.0.0.1', path: '/report', agent }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve(text));
        })
        .on('error', reject);
    });
    await new Promise((r) => setTimeout(r, 100));
    const closed = closing.close(server);
    await new Promise((r) => setTimeout(r, 100));
    release();
    expect(await body).toBe('rows end');
    await closed;
    agent.destroy();
  });

  it('answers a connection that opened just before the stop and sends its request just after, instead of resetting it', async () => {
    const closing = createClosingServer();
    const server = http.createServer(
      { keepAliveTimeout: 65_000 },
      closing.handle((req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(202, { 'content-type': 'application/json' }).end('{"id":"1"}'));
      }),
    );
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;

    // Accepted before the stop (as the supervisor hands a gateway a connection it accepted), its request a moment after.
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    await new Promise((r) => setTimeout(r, 20));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (answer += d));
    const ended = new Promise<string | undefined>((resolve) => {
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code));
      socket.on('close', () => resolve(undefined));
    });
    const closed = closing.close(server);
    await new Promise((r) => setTimeout(r, 60)); // past a sweep of idle connections
    const body = JSON.stringify({ destination: '+64211234567', content: 'Kia ora, e hoa mā 👋🏽' });
    if (!socket.destroyed)
      socket.write(
        `POST /rest/sms/v2/messages HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    expect(await ended).toBeUndefined();
    expect(answer).toMatch(/^HTTP\/1\.1 202 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    await closed;
  });
});
