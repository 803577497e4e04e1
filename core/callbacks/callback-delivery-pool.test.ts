import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/log';
import { startCallbackDeliveryPool } from './callback-delivery-pool';

describe('the callback delivery threads', () => {
  let receiver: http.Server;
  let url: string;
  const bodies: string[] = [];
  beforeAll(async () => {
    // Answers 204, or the status a callback's path asks for.
    receiver = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        bodies.push(body);
        res.writeHead(Number(req.url!.slice(1)) || 204).end();
      });
    });
    receiver.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

  it('delivers two thousand callbacks handed over in one go, each answered with its own outcome', async () => {
    const pool = await startCallbackDeliveryPool(2, createLogger());
    try {
      const outcomes = await Promise.allSettled(
        Array.from({ length: 2000 }, (_, n) =>
          pool.deliver({
            url: `${url}/${n % 10 === 0 ? 503 : 204}`,
            secret: 'hmd_secret',
            eventId: `e${n}`,
            body: JSON.stringify({ n, content: `Kia ora ${n} — 你好 👋🏽` }),
            timeoutMs: 10_000,
            allowPrivate: true,
          }),
        ),
      );
      outcomes.forEach((o, n) => {
        if (n % 10 === 0) {
          expect(o.status).toBe('rejected');
          expect((o as PromiseRejectedResult).reason).toMatchObject({ code: 'unavailable', retryable: true, message: 'callback receiver answered 503' });
        } else expect(o).toEqual({ status: 'fulfilled', value: { status: 204 } });
      });
      expect(new Set(bodies.map((b) => (JSON.parse(b) as { n: number }).n)).size).toBe(2000);
      expect(bodies.every((b) => b.includes('— 你好 👋🏽'))).toBe(true);
    } finally {
      await pool.stop();
    }
  });
});
