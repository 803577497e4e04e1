import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HermodError } from '../../lib/errors';
import { deliverCallback } from './callback-sender';
import { nextTryAt } from './callback-job';

/** A receiver that answers each path with its status and headers: /429?retry-after=120 → 429, Retry-After: 120. */
describe('what a receiver’s refusal tells hermod', () => {
  let server: http.Server;
  let port = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const headers: Record<string, string> = {};
      const after = url.searchParams.get('retry-after');
      if (after) headers['retry-after'] = after;
      const imAfter = url.searchParams.get('RetryAfter');
      if (imAfter) headers.RetryAfter = imAfter;
      req.resume();
      req.on('end', () => res.writeHead(Number(url.pathname.slice(1)), headers).end());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const refusal = (path: string): Promise<HermodError> =>
    deliverCallback({
      url: `http://127.0.0.1:${port}${path}`,
      secret: 's',
      eventId: 'e-1',
      body: JSON.stringify({ status: 'received', detail: 'Kua tae atu ✅' }),
      timeoutMs: 3000,
      allowPrivate: true,
    }).then(
      () => Promise.reject(new Error('delivered')),
      (e: HermodError) => e,
    );

  it('takes the seconds of Retry-After on a 429 or 503, in seconds or as a date, and none beyond an hour (callbacks trial: ignored)', async () => {
    expect(await refusal('/429?retry-after=120')).toMatchObject({ retryable: true, retryAfterSeconds: 120 });
    expect(await refusal('/503?retry-after=7')).toMatchObject({ retryable: true, retryAfterSeconds: 7 });
    const inAMinute = new Date(Date.now() + 61_000).toUTCString();
    const dated = await refusal(`/429?retry-after=${encodeURIComponent(inAMinute)}`);
    expect(dated.retryAfterSeconds).toBeGreaterThanOrEqual(58);
    expect(dated.retryAfterSeconds).toBeLessThanOrEqual(61);
    expect((await refusal('/429?retry-after=86400')).retryAfterSeconds).toBe(3600);
    expect((await refusal('/429?retry-after=soon')).retryAfterSeconds).toBeUndefined();
    expect((await refusal('/500?retry-after=120')).retryAfterSeconds).toBeUndefined();
    // Intelligent Messaging's own spelling of it (SPEC), which a receiver built to it may answer with.
    expect((await refusal('/429?RetryAfter=30')).retryAfterSeconds).toBe(30);
  });

  it('stops retrying a callback its receiver answers 410 Gone, and retries the other failures (callbacks trial: retried for 24 h)', async () => {
    expect(await refusal('/410')).toMatchObject({ retryable: false, message: expect.stringContaining('410') });
    expect(await refusal('/404')).toMatchObject({ retryable: true });
    expect(await refusal('/500')).toMatchObject({ retryable: true });
  });

  it('waits at least what Retry-After asks before the next try, within the callback’s window', () => {
    const job = { createdAt: 0, firstTriedAt: 0, attempt: 0 };
    expect(nextTryAt(job, 86_400_000, 1000, 120)).toBeGreaterThanOrEqual(121_000);
    expect(nextTryAt(job, 60_000, 1000, 120)).toBe(60_000);
  });
});
