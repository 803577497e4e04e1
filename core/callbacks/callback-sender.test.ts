import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deliverCallback, type SignedDelivery } from './callback-sender';

/** A receiver on 127.0.0.1 and the same port on 127.0.0.2, so names can answer either or both. */
describe('callbacks to receivers named by host name', () => {
  const servers: http.Server[] = [];
  const received: { local: string; eventId: string; body: string }[] = [];
  const connections: string[] = [];
  let port = 0;

  beforeAll(async () => {
    for (const host of ['127.0.0.1', '127.0.0.2']) {
      const server = http.createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (c: string) => (body += c));
        req.on('end', () => {
          received.push({ local: req.socket.localAddress ?? '', eventId: String(req.headers['x-hermod-event-id']), body });
          res.writeHead(200).end();
        });
      });
      server.on('connection', (s: Socket) => connections.push(s.localAddress ?? ''));
      await new Promise<void>((r) => server.listen(port, host, r));
      port = (server.address() as AddressInfo).port;
      servers.push(server);
    }
  });
  afterAll(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });
  beforeEach(() => {
    received.length = 0;
    connections.length = 0;
  });

  const delivery = (url: string, eventId: string, allowPrivate = true): SignedDelivery => ({
    url,
    secret: 'hmd_secret',
    eventId,
    body: JSON.stringify({ id: eventId, content: 'Kia ora, e hoa mā — tēnā koe 你好世界 👋🏽🎉' }),
    timeoutMs: 3000,
    allowPrivate,
  });
  /** A resolver that answers each name from a table and counts what it was asked. */
  const resolverOf = (answers: Record<string, string[] | (() => string[])>) => {
    const asked: string[] = [];
    const resolve = async (host: string): Promise<string[]> => {
      asked.push(host);
      const a = answers[host];
      if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return typeof a === 'function' ? a() : a;
    };
    return { resolve, asked };
  };

  it('delivers to localhost through the system resolver', async () => {
    const answer = await deliverCallback(delivery(`http://localhost:${port}/status`, 'local-1'));
    expect(answer.status).toBe(200);
    expect(received.map((r) => r.eventId)).toEqual(['local-1']);
    expect(JSON.parse(received[0]!.body).content).toBe('Kia ora, e hoa mā — tēnā koe 你好世界 👋🏽🎉');
  });

  it('delivers to a name with several addresses, going on to the next address when the first refuses', async () => {
    // 127.0.0.3 has no listener: the connection falls through to the next checked address.
    const { resolve } = resolverOf({ 'hooks.example.com': ['127.0.0.3', '127.0.0.1'] });
    await deliverCallback(delivery(`http://hooks.example.com:${port}/status`, 'multi-1'), { resolve });
    expect(received).toMatchObject([{ eventId: 'multi-1', local: '127.0.0.1' }]);
  });

  it('delivers to a name that answers both IPv4 and IPv6 addresses', async () => {
    const { resolve } = resolverOf({ 'dual.example.com': ['::1', '127.0.0.2'] });
    await deliverCallback(delivery(`http://dual.example.com:${port}/status`, 'dual-1'), { resolve });
    expect(received).toMatchObject([{ eventId: 'dual-1', local: '127.0.0.2' }]);
  });

  it('refuses a name when any one of its addresses is private, and sends nothing', async () => {
    const { resolve } = resolverOf({ 'mixed.example.com': ['93.184.216.34', '10.0.0.7'], 'lo.example.com': ['2606:4700::1111', '::1'] });
    await expect(deliverCallback(delivery(`http://mixed.example.com:${port}/x`, 'mixed-1', false), { resolve })).rejects.toMatchObject({
      code: 'forbidden',
      retryable: false,
    });
    await expect(deliverCallback(delivery(`https://lo.example.com:${port}/x`, 'mixed-2', false), { resolve })).rejects.toMatchObject({
      code: 'forbidden',
      retryable: false,
    });
    expect(received).toEqual([]);
  });

  it('connects only to the address it checked, even when the name answers a private one a moment later', async () => {
    // DNS rebinding: a public address for the check, loopback for anyone who asks again.
    let calls = 0;
    const { resolve, asked } = resolverOf({ 'rebind.example.com': () => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']) });
    await expect(
      deliverCallback({ ...delivery(`http://rebind.example.com:${port}/x`, 'rebind-1', false), timeoutMs: 1500 }, { resolve }),
    ).rejects.toMatchObject({ code: 'unavailable' });
    expect(asked).toEqual(['rebind.example.com']);
    expect(connections).toEqual([]);
    expect(received).toEqual([]);
  });

  it('treats a name that does not resolve as a failure worth retrying', async () => {
    const { resolve } = resolverOf({});
    await expect(deliverCallback(delivery(`http://nowhere.example.com:${port}/x`, 'nx-1'), { resolve })).rejects.toMatchObject({
      code: 'unavailable',
      retryable: true,
    });
  });

  it('reuses kept-alive connections for callbacks to the same name and answer', async () => {
    const { resolve } = resolverOf({ 'keep.example.com': ['127.0.0.1'] });
    for (let i = 0; i < 20; i++) await deliverCallback(delivery(`http://keep.example.com:${port}/status`, `keep-${i}`), { resolve });
    expect(received).toHaveLength(20);
    // undici's pool may open a second connection while the first is being handed back (it does, for the second
    // callback); from then on the two carry everything.
    expect(connections.length).toBeLessThanOrEqual(2);
    expect(new Set(connections)).toEqual(new Set(['127.0.0.1']));
  });

  it('does not reuse a pooled connection to an address the name no longer answers', async () => {
    let answer = ['127.0.0.1'];
    const { resolve } = resolverOf({ 'moved.example.com': () => answer });
    await deliverCallback(delivery(`http://moved.example.com:${port}/status`, 'moved-1'), { resolve });
    answer = ['127.0.0.2'];
    await deliverCallback(delivery(`http://moved.example.com:${port}/status`, 'moved-2'), { resolve });
    expect(received.map((r) => [r.eventId, r.local])).toEqual([
      ['moved-1', '127.0.0.1'],
      ['moved-2', '127.0.0.2'],
    ]);
    expect(connections).toEqual(['127.0.0.1', '127.0.0.2']);
  });
});
