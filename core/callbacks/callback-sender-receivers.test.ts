import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRoleCertificates } from '../../lib/role-certificates';
import { deliverCallback, type SignedDelivery, signature } from './callback-sender';

/** Receivers as they are met in the world: TLS from a private CA, IPv6, credentials, redirects, closing and silent ones. */
const WORLD = 'Kia ora, e hoa mā 👋🏽 你好';

type Received = { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer };

const delivery = (url: string, eventId: string, over: Partial<SignedDelivery> = {}): SignedDelivery => ({
  url,
  secret: 'hmd_secret',
  eventId,
  body: JSON.stringify({ id: eventId, content: WORLD }),
  timeoutMs: 3000,
  allowPrivate: true,
  ...over,
});

function collect(req: http.IncomingMessage): Promise<Received> {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) =>
    req.on('end', () => resolve({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) })),
  );
}

async function listen<S extends http.Server | tls.Server | net.Server>(server: S, host = '127.0.0.1'): Promise<number> {
  await new Promise<void>((r) => server.listen(0, host, r));
  return (server.address() as AddressInfo).port;
}

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});
function closeLater(server: http.Server | https.Server): void {
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
}

describe('an HTTPS receiver with a certificate from a private CA', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-cb-tls-'));
  const names: string[] = [];
  const received: Received[] = [];
  let port = 0;
  let caFile = '';

  beforeAll(async () => {
    const good = await makeRoleCertificates(path.join(dir, 'good'), 'hooks', ['hooks.example.com', 'localhost']);
    const other = await makeRoleCertificates(path.join(dir, 'other'), 'other', ['other.example.com']);
    caFile = good.caFile;
    const context = (files: typeof good) => tls.createSecureContext({ cert: fs.readFileSync(files.certFile), key: fs.readFileSync(files.keyFile) });
    const goodContext = context(good);
    // Behind SNI: only the name the certificate is for gets it; anything else (an address, no name) gets another.
    const server = https.createServer(
      {
        cert: fs.readFileSync(other.certFile),
        key: fs.readFileSync(other.keyFile),
        SNICallback: (name, cb) => {
          names.push(name);
          cb(null, name === 'hooks.example.com' || name === 'localhost' ? goodContext : undefined);
        },
      },
      async (req, res) => {
        received.push(await collect(req));
        res.writeHead(200).end();
      },
    );
    port = await listen(server);
    closeLater(server);
  });

  it('fails as retryable while the CA is not trusted, and says why', async () => {
    const resolve = async () => ['127.0.0.1'];
    await expect(deliverCallback(delivery(`https://hooks.example.com:${port}/hook`, 'tls-1'), { resolve })).rejects.toMatchObject({
      code: 'unavailable',
      retryable: true,
      // The error's code too, which an operator can look up: the message alone does not always say it.
      message: expect.stringMatching(/certificate.*\((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\)$/i),
    });
    // The host name went as SNI, not the pinned address.
    expect(names).toContain('hooks.example.com');
    expect(received).toEqual([]);
  });

  it('delivers once the CA is trusted through NODE_EXTRA_CA_CERTS, to the certificate behind the right SNI name', async () => {
    const sender = path.join(import.meta.dirname, 'callback-sender.ts');
    const script = `
      import { deliverCallback } from ${JSON.stringify(sender)};
      const d = ${JSON.stringify(delivery(`https://hooks.example.com:${port}/hook`, 'tls-2'))};
      const one = await deliverCallback(d, { resolve: async () => ['127.0.0.1'] });
      const two = await deliverCallback({ ...d, url: ${JSON.stringify(`https://localhost:${port}/hook`)}, eventId: 'tls-3' });
      console.log(JSON.stringify([one.status, two.status]));
      process.exit(0);
    `;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile }, cwd: path.join(import.meta.dirname, '../..'), timeout: 15_000 },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
      ),
    );
    expect(JSON.parse(out.trim())).toEqual([200, 200]);
    expect(received.map((r) => r.headers['x-hermod-event-id'])).toEqual(['tls-2', 'tls-3']);
    expect(JSON.parse(received[0]!.body.toString('utf8')).content).toBe(WORLD);
  }, 20_000);
});

describe('IPv6 literals and credentials in the URL', () => {
  const received: Received[] = [];
  let port6 = 0;
  let port4 = 0;

  beforeAll(async () => {
    const handler = async (req: http.IncomingMessage, res: http.ServerResponse) => {
      received.push(await collect(req));
      res.writeHead(204).end();
    };
    const v6 = http.createServer(handler);
    port6 = await listen(v6, '::1');
    closeLater(v6);
    const v4 = http.createServer(handler);
    port4 = await listen(v4);
    closeLater(v4);
  });

  it('delivers to http://[::1]:port when private addresses are allowed', async () => {
    received.length = 0;
    expect((await deliverCallback(delivery(`http://[::1]:${port6}/x?q=1`, 'v6-1'))).status).toBe(204);
    expect(received).toMatchObject([{ url: '/x?q=1', headers: { host: `[::1]:${port6}` } }]);
    await expect(deliverCallback(delivery(`http://[::1]:${port6}/x`, 'v6-2', { allowPrivate: false }))).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('sends user and percent-encoded password as Basic authentication, decoded', async () => {
    received.length = 0;
    await deliverCallback(delivery(`http://user:p%40ss@127.0.0.1:${port4}/x`, 'auth-1'));
    await deliverCallback(delivery(`http://t%C4%93n%C4%81:%E4%BD%A0%3A%F0%9F%91%8B@127.0.0.1:${port4}/x`, 'auth-2'));
    const basic = (r: Received) => Buffer.from(String(r.headers.authorization).replace(/^Basic /, ''), 'base64').toString('utf8');
    expect(received.map(basic)).toEqual(['user:p@ss', 'tēnā:你:👋']);
  });
});

describe('receivers that close their connections', () => {
  it('loses nothing to a receiver answering Connection: close', async () => {
    let got = 0;
    const server = http.createServer(async (req, res) => {
      await collect(req);
      got++;
      res.writeHead(200, { connection: 'close' }).end();
    });
    const port = await listen(server);
    closeLater(server);
    let failures = 0;
    for (let i = 0; i < 60; i++) {
      const batch = Array.from({ length: 5 }, (_, j) => deliverCallback(delivery(`http://127.0.0.1:${port}/c`, `close-${i}-${j}`)));
      failures += (await Promise.allSettled(batch)).filter((r) => r.status === 'rejected').length;
    }
    console.log(`Connection: close receiver: ${failures} of 300 failed`);
    expect(failures).toBe(0);
    expect(got).toBe(300);
  });

  it('loses nothing to a receiver closing connections idle 100 ms (without a Keep-Alive hint, as many proxies do)', async () => {
    const got: string[] = [];
    const timers = new WeakMap<Socket, NodeJS.Timeout>();
    // Closed as a proxy closes an idle connection: what arrives on it after is never seen.
    const idle = (socket: Socket) =>
      timers.set(
        socket,
        setTimeout(() => socket.destroy(), 100),
      );
    const server = http.createServer(async (req, res) => {
      clearTimeout(timers.get(req.socket));
      await collect(req);
      got.push(String(req.headers['x-hermod-event-id']));
      res.on('finish', () => idle(req.socket));
      res.writeHead(200).end();
    });
    // Node's own idle timer would send "Keep-Alive: timeout=0" for 100 ms, which undici heeds; a proxy closes without saying so.
    server.keepAliveTimeout = 0;
    server.on('connection', idle);
    const port = await listen(server);
    closeLater(server);
    const sent: string[] = [];
    let failures = 0;
    const started = Date.now();
    while (Date.now() - started < 3000) {
      // Callbacks in bursts, the gaps around the receiver's idle limit.
      const ids = [0, 1, 2].map((j) => `idle-${sent.length}-${j}`);
      sent.push(...ids);
      const settled = await Promise.allSettled(ids.map((id) => deliverCallback(delivery(`http://127.0.0.1:${port}/i`, id))));
      failures += settled.filter((r) => r.status === 'rejected').length;
      await new Promise((r) => setTimeout(r, 95 + Math.random() * 10));
    }
    console.log(`idle-closing receiver: ${failures} of ${sent.length} failed, ${got.length - new Set(got).size} received twice`);
    expect(failures).toBe(0);
    expect(new Set(got)).toEqual(new Set(sent));
  }, 20_000);

  it('loses nothing to a Node receiver with keepAliveTimeout = 100 ms', async () => {
    let got = 0;
    const server = http.createServer(async (req, res) => {
      await collect(req);
      got++;
      res.writeHead(200).end();
    });
    server.keepAliveTimeout = 100;
    const port = await listen(server);
    closeLater(server);
    let failures = 0;
    let sent = 0;
    const started = Date.now();
    while (Date.now() - started < 3000) {
      const r = await Promise.allSettled([deliverCallback(delivery(`http://127.0.0.1:${port}/k`, `ka-${sent}`))]);
      sent++;
      failures += r.filter((x) => x.status === 'rejected').length;
      await new Promise((res) => setTimeout(res, 95 + Math.random() * 10));
    }
    console.log(`keepAliveTimeout 100 ms receiver: ${failures} of ${sent} failed`);
    expect(failures).toBe(0);
    expect(got).toBe(sent);
  }, 20_000);
});

describe('redirects, silence and large bodies', () => {
  const received: Received[] = [];
  let port = 0;
  beforeAll(async () => {
    const server = http.createServer(async (req, res) => {
      const r = await collect(req);
      const m = /^\/redirect\/(\d+)$/.exec(req.url ?? '');
      if (m) return res.writeHead(Number(m[1]), { location: '/ok' }).end();
      if (req.url === '/silent') return; // never answers
      received.push(r);
      res.writeHead(200).end();
    });
    port = await listen(server);
    closeLater(server);
  });

  it.each([301, 302, 307, 308])(
    'treats a %i as a retryable failure, does not follow it, and names where it points (callbacks trial: the log said only "answered 301")',
    async (status) => {
      received.length = 0;
      await expect(deliverCallback(delivery(`http://127.0.0.1:${port}/redirect/${status}`, `r-${status}`))).rejects.toMatchObject({
        code: 'unavailable',
        retryable: true,
        message: `callback receiver answered ${status} redirecting to http://127.0.0.1:${port}/ok: redirects are not followed (set the callback URL to where it points)`,
      });
      expect(received).toEqual([]);
    },
  );

  it('gives up on a receiver that never answers within the timeout, and the next callback to it still goes', async () => {
    const started = Date.now();
    const silent = Array.from({ length: 3 }, (_, i) => deliverCallback(delivery(`http://127.0.0.1:${port}/silent`, `s-${i}`, { timeoutMs: 1500 })));
    const outcomes = await Promise.allSettled(silent);
    const took = Date.now() - started;
    console.log(`silent receiver: failed after ${took} ms (timeout 1500 ms)`);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect((outcomes[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'unavailable', retryable: true, message: expect.stringMatching(/TIMEOUT/) });
    expect(took).toBeGreaterThanOrEqual(1400);
    expect(took).toBeLessThan(3000);
    received.length = 0;
    expect((await deliverCallback(delivery(`http://127.0.0.1:${port}/ok`, 'after-silence', { timeoutMs: 1500 }))).status).toBe(200);
    expect(received).toHaveLength(1);
  }, 10_000);

  it('gives up within the timeout on an HTTPS receiver that never finishes the TLS handshake', async () => {
    const sockets: Socket[] = [];
    const stalled = net.createServer((s) => sockets.push(s)); // takes the connection, never says a word
    const stalledPort = await listen(stalled);
    closers.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => stalled.close(r));
    });
    const started = Date.now();
    await expect(deliverCallback(delivery(`https://127.0.0.1:${stalledPort}/hook`, 'stall-1', { timeoutMs: 1500 }))).rejects.toMatchObject({
      code: 'unavailable',
      retryable: true,
    });
    const took = Date.now() - started;
    console.log(`stalled TLS handshake: failed after ${took} ms (timeout 1500 ms)`);
    expect(took).toBeLessThan(3000);
  }, 15_000);

  it('delivers a 10 KB body byte-exact with a signature that verifies', async () => {
    received.length = 0;
    const text = `${WORLD} `.repeat(Math.ceil(10_240 / Buffer.byteLength(`${WORLD} `)));
    const body = JSON.stringify({ type: 'reply', id: 'big-1', content: text });
    const now = Date.UTC(2026, 10, 24, 12);
    await deliverCallback(delivery(`http://127.0.0.1:${port}/big`, 'big-1', { body, now }));
    expect(received).toHaveLength(1);
    const got = received[0]!;
    expect(Buffer.byteLength(body)).toBeGreaterThan(10_000);
    expect(got.body.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(got.headers['content-type']).toBe('application/json');
    const sig = String(got.headers['x-hermod-signature']);
    const t = Number(/^t=(\d+),/.exec(sig)![1]);
    expect(t).toBe(now / 1000);
    expect(sig).toBe(signature('hmd_secret', t, got.body.toString('utf8')));
  });
});
