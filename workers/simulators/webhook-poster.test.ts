import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhookPoster } from './http-simulator-support';

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A receiver that answers 503 (a gateway restarting) until `downForMs` has passed, then takes each webhook. */
async function receiverDownFor(downForMs: number) {
  const started = Date.now();
  const taken: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (Date.now() - started < downForMs) return void res.writeHead(503).end();
      taken.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200).end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/wab`, taken };
}

describe('the simulators’ webhook poster', () => {
  it('keeps redelivering a report while hermod restarts, as the providers do, instead of giving up within a second', async () => {
    const receiver = await receiverDownFor(2_500);
    const poster = createWebhookPoster();
    const body = JSON.stringify({ status: 'delivered', text: 'Kia ora 👋🏽' });
    const result = await poster.post(receiver.url, Buffer.from(body), {});
    poster.close();
    expect(result).toEqual({ ok: true, error: '' });
    expect(receiver.taken).toEqual([body]);
  }, 15_000);

  it('gives up once its window has passed, saying what the receiver answered last', async () => {
    const receiver = await receiverDownFor(60_000);
    const poster = createWebhookPoster({ retryForMs: 800 });
    const result = await poster.post(receiver.url, Buffer.from('{}'), {});
    poster.close();
    expect(result).toEqual({ ok: false, error: 'HTTP 503' });
  });
});
