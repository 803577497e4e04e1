import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHermod, type HermodProcess } from './support/hermod-process';

/** How long hermod holds a TCP connection on `port` that sends nothing (infinity: still open after 20 s). */
async function closedAfterSilence(port: number): Promise<number> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const started = performance.now();
  const closedAfter = await new Promise<number>((resolve) => {
    socket.once('close', () => resolve(performance.now() - started));
    socket.resume();
    setTimeout(() => resolve(Number.POSITIVE_INFINITY), 20_000).unref();
  });
  socket.destroy();
  return closedAfter;
}

describe('a request whose body never arrives in full', () => {
  let hermod: HermodProcess;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-truncated-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1', HERMOD_REQUEST_IDLE_TIMEOUT: '2s' } });
  });

  afterAll(async () => {
    await hermod?.stop();
  });

  it('is answered 408 and dropped once the client has sent nothing for HERMOD_REQUEST_IDLE_TIMEOUT, not held open', async () => {
    const socket = tls.connect({ host: '127.0.0.1', port: hermod.httpsPort, ca: hermod.ca(), servername: 'localhost' });
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    const body = '{"destination":"+6421000001","content":"Kia ora, e hoa mā"}';
    socket.write(
      `POST /rest/sms/v2/messages HTTP/1.1\r\nhost: localhost\r\nauthorization: Basic ${Buffer.from('acme:secret').toString('base64')}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body) + 40}\r\n\r\n${body}`,
    );
    const started = Date.now();
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    expect(Date.now() - started).toBeLessThan(15_000);
    // In SMS Gateway v2's error shape, not Node's bare 408 nor nothing.
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ statusCode: 408, error: 'Request Timeout' });
  }, 30_000);

  it('is answered 408 over HTTPS when its body trickles a byte a second, under HERMOD_REQUEST_MIN_RATE, instead of holding the connection', async () => {
    const socket = tls.connect({ host: '127.0.0.1', port: hermod.httpsPort, ca: hermod.ca(), servername: 'localhost' });
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    const body = Buffer.from('{"destination":"+6421000001","content":"Kia ora, e hoa mā 🐢 慢慢来"}');
    socket.write(
      `POST /rest/sms/v2/messages HTTP/1.1\r\nhost: localhost\r\nauthorization: Basic ${Buffer.from('acme:secret').toString('base64')}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
    );
    const started = Date.now();
    let sent = 0;
    // Each byte well inside the 2 s idle window: only the rate can end it.
    const trickle = setInterval(() => {
      if (sent < body.length && !socket.destroyed) socket.write(body.subarray(sent, ++sent));
    }, 1_000);
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    try {
      await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    } finally {
      clearInterval(trickle);
    }
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(sent).toBeLessThan(body.length);
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
      statusCode: 408,
      error: 'Request Timeout',
      message: expect.stringContaining('slower than 240 bytes a second'),
    });
  }, 30_000);

  it('lets go of a connection that never begins its TLS handshake within 10 s, not two minutes later', async () => {
    const closedAfter = await closedAfterSilence(hermod.httpsPort);
    expect(closedAfter).toBeGreaterThan(8_000);
    expect(closedAfter).toBeLessThan(15_000);
  }, 30_000);
});

describe('one client holding many idle connections', () => {
  let hermod: HermodProcess;
  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-connection-cap-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1', HERMOD_MAX_CONNECTIONS_PER_ADDRESS: '4' } });
  });
  afterAll(async () => {
    await hermod?.stop();
  });

  it('is refused connections past HERMOD_MAX_CONNECTIONS_PER_ADDRESS as they open, and is served on those it holds', async () => {
    const sockets = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const socket = net.connect(hermod.httpsPort, '127.0.0.1');
        socket.on('error', () => {});
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
        return socket;
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(sockets.filter((s) => s.destroyed || s.readableEnded).length).toBe(2);
    for (const s of sockets) s.destroy();
    await new Promise((r) => setTimeout(r, 200));
    // Once they are closed, the client is served again, over TLS with hermod's certificate.
    const socket = tls.connect({ host: '127.0.0.1', port: hermod.httpsPort, ca: hermod.ca(), servername: 'localhost' });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', () => resolve());
      socket.once('error', reject);
    });
    socket.destroy();
  }, 30_000);

  it('lets go of a socket on the plain HTTP port that sends nothing for 10 s', async () => {
    const closedAfter = await closedAfterSilence(hermod.httpPort);
    expect(closedAfter).toBeGreaterThan(8_000);
    expect(closedAfter).toBeLessThan(15_000);
  }, 30_000);
});
