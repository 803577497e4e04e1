import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HermodProcess } from './support/hermod-process';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

interface Answer {
  status: number;
  limit: string | undefined;
  retryAfter: string | undefined;
  /** Local clock when the request was sent and when its answer arrived. */
  sentAt: number;
  answeredAt: number;
}

/**
 * Two gateway processes behind one port (HERMOD_GATEWAYS=2): a burst of
 * requests on many connections lands on both, and the Intelligent Messaging
 * limit must hold for the service as a whole, per application.
 */
describe('Intelligent Messaging rate limits across two gateways', () => {
  let hermod: HermodProcess;
  let running: HermodWithSimulator;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    running = await startHermodWithSimulator('im-rate-limits', { HERMOD_GATEWAYS: '2', HERMOD_IM_RATE_LIMIT: '4' });
    hermod = running.hermod;
    keys.acme = /api key: (\S+)/.exec((await hermod.cli(['keys', 'issue', 'acme'])).output)![1]!;
    keys.news = /api key: (\S+)/.exec((await hermod.cli(['apps', 'create', 'news', '--api-key'])).output)![1]!;
  }, 120_000);

  afterAll(() => running?.stop());

  /** One request on its own connection, so the burst spreads over both gateways. */
  const post = (key: string, i: number): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({
        destination: { mobile: `+64215${String(i).padStart(5, '0')}` },
        message: { type: 'text', text: { body: `Kia ora ${i} 👋🏽` } },
        delivery_attempts: [{ channel: 'sms' }],
      });
      const sentAt = Date.now();
      const req = https.request(
        `${hermod.baseUrl}/rest/im/v1/message`,
        {
          method: 'POST',
          ca: hermod.ca(),
          agent: false,
          headers: { authorization: key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              limit: res.headers['x-ratelimit-limit'] as string | undefined,
              retryAfter: res.headers.retryafter as string | undefined,
              sentAt,
              answeredAt: Date.now(),
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  /**
   * Bursts of `n` concurrent requests per application, each fired at the start
   * of a clock second; the answers of a burst that all came back within that
   * second belong to one window. Returns the first such burst.
   */
  const burstWithinOneSecond = async (apps: string[], n: number): Promise<Record<string, Answer[]>> => {
    for (let attempt = 0; attempt < 15; attempt++) {
      await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
      const second = Math.floor(Date.now() / 1000);
      const answers = await Promise.all(apps.map((app) => Promise.all(Array.from({ length: n }, (_, i) => post(keys[app]!, attempt * 100 + i)))));
      if (answers.flat().every((a) => Math.floor(a.answeredAt / 1000) === second)) return Object.fromEntries(apps.map((app, i) => [app, answers[i]!]));
    }
    throw new Error('no burst was answered within one second');
  };

  it('accepts no more than the application’s limit in a second from both gateways together, and says so in X-RateLimit-Limit and RetryAfter', async () => {
    const { acme } = await burstWithinOneSecond(['acme'], 16);
    const accepted = acme!.filter((a) => a.status === 202);
    const refused = acme!.filter((a) => a.status === 429);
    expect(accepted).toHaveLength(4);
    expect(refused).toHaveLength(12);
    for (const a of acme!) expect(a.limit).toBe('4');
    for (const r of refused) expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(10);
  });

  it('gives each application its own limit: one set by the operator, the other the service default', async () => {
    const set = await hermod.cli(['apps', 'set-im-rate-limit', 'news', '2']);
    expect(set).toMatchObject({ code: 0 });
    expect(set.output).toContain('2 requests per second');
    expect((await hermod.cli(['apps', 'set-im-rate-limit', 'news', '101'])).code).toBe(2);

    const { acme, news } = await burstWithinOneSecond(['acme', 'news'], 12);
    expect(acme!.filter((a) => a.status === 202)).toHaveLength(4);
    expect(news!.filter((a) => a.status === 202)).toHaveLength(2);
    expect(new Set(news!.map((a) => a.limit))).toEqual(new Set(['2']));

    // 0 lifts the limit altogether: no X-RateLimit-Limit, nothing refused.
    expect((await hermod.cli(['apps', 'set-im-rate-limit', 'news', '0'])).code).toBe(0);
    const free = await burstWithinOneSecond(['news'], 12);
    expect(free.news!.every((a) => a.status === 202 && a.limit === undefined)).toBe(true);
  });
});
