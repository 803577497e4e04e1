import { describe, expect, it } from 'vitest';
import { createMemoryState } from '../../core/adapters/memory-state';
import { createImRateBudget } from '../../core/im/im-rate-budget';
import { createSharedRateLimiter, lateRateShares, type RateBudgetSource } from './shared-rate-limiter';

/** Core's budget on one hand-moved clock, which the gateways' limiters share, starting 100 ms into a window. */
function world(limits: Record<string, number>, defaultLimit = 0) {
  let ms = 1_700_000_000_100;
  const now = () => ms;
  const state = createMemoryState({ now });
  const budget = createImRateBudget({ state, limitOf: async (id) => limits[id] ?? -1, defaultLimit });
  const calls: { app: string; wanted: number }[] = [];
  // How long core's answer takes to come back (a loaded core, a slow network).
  let answerTakesMs = 0;
  const source: RateBudgetSource = async (app, wanted) => {
    calls.push({ app, wanted });
    const answer = await budget.take(app, wanted);
    ms += answerTakesMs;
    return answer;
  };
  return {
    gateway: () => createSharedRateLimiter(source, now),
    state,
    now,
    calls,
    advance: (by: number) => void (ms += by),
    slowAnswers: (by: number) => void (answerTakesMs = by),
  };
}

const accepted = async (limiter: ReturnType<typeof createSharedRateLimiter>, app: string, n: number) =>
  (await Promise.all(Array.from({ length: n }, () => limiter.take(app)))).filter((v) => v.ok).length;

describe('createSharedRateLimiter', () => {
  it('lets two gateways together accept no more than the application’s limit in a second', async () => {
    const w = world({ shop: 10 });
    const [one, two] = [w.gateway(), w.gateway()];
    const [a, b] = await Promise.all([accepted(one, 'shop', 30), accepted(two, 'shop', 30)]);
    expect(a + b).toBe(10);
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
  });

  it('refuses with the time left in the window, then accepts again in the next one', async () => {
    const w = world({ shop: 2 });
    const g = w.gateway();
    expect(await g.take('shop')).toEqual({ ok: true, limit: 2 });
    expect(await g.take('shop')).toEqual({ ok: true, limit: 2 });
    expect(await g.take('shop')).toEqual({ ok: false, limit: 2, retryAfterSeconds: 1 });
    w.advance(900);
    expect(await g.take('shop')).toEqual({ ok: true, limit: 2 });
  });

  it('keeps each application’s allowance apart', async () => {
    const w = world({ shop: 3, news: 5 });
    const g = w.gateway();
    expect(await accepted(g, 'shop', 10)).toBe(3);
    expect(await accepted(g, 'news', 10)).toBe(5);
  });

  it('asks core once for a burst, and for a tenth of the limit at a time for requests one at a time', async () => {
    const w = world({ shop: 100 });
    const g = w.gateway();
    expect(await accepted(g, 'shop', 60)).toBe(60);
    // The first ask learnt the limit; the second was for the 59 waiting on it.
    expect(w.calls).toEqual([
      { app: 'shop', wanted: 1 },
      { app: 'shop', wanted: 59 },
    ]);
    w.advance(1000);
    for (let i = 0; i < 31; i++) expect(await g.take('shop')).toEqual({ ok: true, limit: 100 });
    expect(w.calls.slice(2).map((c) => c.wanted)).toEqual([10, 10, 10, 10]);
  });

  it('accepts everything of an application without a limit, asking core once a second', async () => {
    const w = world({}, 0);
    const g = w.gateway();
    expect(await accepted(g, 'free', 500)).toBe(500);
    expect(w.calls).toHaveLength(1);
    w.advance(1000);
    await g.take('free');
    expect(w.calls).toHaveLength(2);
  });

  it('accepts a burst within the limit that arrives just before a second ends, with core answering in 450 ms', async () => {
    const w = world({ shop: 100 });
    const g = w.gateway();
    w.advance(800); // 900 ms into the second: the first answer comes back after it has ended
    w.slowAnswers(450);
    const verdicts = await Promise.all(Array.from({ length: 60 }, () => g.take('shop')));
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
  });

  it('never spends a share that came back after its second ended, so two gateways accept no more than the limit in the next', async () => {
    const w = world({ shop: 10 });
    let release = () => {};
    const held: RateBudgetSource = async (app, wanted) => {
      const answer = await createImRateBudget({ state: w.state, limitOf: async () => 10, defaultLimit: 0 }).take(app, wanted);
      await new Promise<void>((r) => (release = r));
      return answer;
    };
    const slow = createSharedRateLimiter(held, w.now);
    // Ten requests on one gateway; core grants them in this second, but the answer is held past its end.
    const waiting = Promise.all(Array.from({ length: 10 }, () => slow.take('shop')));
    await new Promise((r) => setImmediate(r));
    w.advance(1000);
    // The next second's ten go to the other gateway.
    expect(await accepted(w.gateway(), 'shop', 10)).toBe(10);
    release();
    await new Promise((r) => setImmediate(r));
    // The held answer is late: its ten are not spent; they ask again, and this second is spent.
    release();
    expect((await waiting).filter((v) => v.ok)).toEqual([]);
  });

  it('accepts a burst under the limit when core’s answers keep missing their second, spending only shares core counted (a trial on a loaded machine got 500s)', async () => {
    const w = world({ shop: 100 });
    let late = 0;
    const limiter = createSharedRateLimiter(
      async (app, wanted) => {
        const answer = await createImRateBudget({ state: w.state, limitOf: async () => 100, defaultLimit: 0 }).take(app, wanted);
        w.advance(1500);
        return answer;
      },
      w.now,
      () => late++,
    );
    const verdicts = await Promise.all(Array.from({ length: 40 }, () => limiter.take('shop')));
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
    expect(late).toBe(40);
  });

  it('refuses a burst over the limit with 429, not 500, when core’s late answers granted part of it', async () => {
    let ms = 0;
    const limiter = createSharedRateLimiter(
      async (_app, wanted) => {
        ms += 1500;
        return { limit: 5, granted: Math.min(5, wanted), windowEndsInMs: 100 };
      },
      () => ms,
    );
    const verdicts = await Promise.all(Array.from({ length: 40 }, () => limiter.take('shop').catch((err: unknown) => err)));
    expect(verdicts.filter((v) => v instanceof Error)).toEqual([]);
    expect(verdicts.filter((v) => (v as { ok: boolean }).ok)).toHaveLength(5);
  });

  it('still refuses with 429, not 500, when core’s late answers say the second is spent', async () => {
    let ms = 0;
    const limiter = createSharedRateLimiter(
      async () => {
        ms += 1500;
        return { limit: 5, granted: 0, windowEndsInMs: 100 };
      },
      () => ms,
    );
    expect(await limiter.take('shop')).toEqual({ ok: false, limit: 5, retryAfterSeconds: 1 });
  });
  it('accepts a request of an application without a limit however late core’s answer comes: "no limit" holds in any second (whole suite under load: IM sends answered 500)', async () => {
    const w = world({}, 0);
    w.slowAnswers(1500);
    const limiter = w.gateway();
    expect(await limiter.take('open')).toEqual({ ok: true, limit: 0 });
    expect(await accepted(limiter, 'open', 20)).toBe(20);
  });

  it('logs requests accepted from late shares once at the first, then at most once a minute with how many since', () => {
    const lines: { msg: string; fields?: Record<string, unknown> }[] = [];
    const log = { warn: (msg: string, fields?: Record<string, unknown>) => lines.push({ msg, fields }) } as unknown as Parameters<typeof lateRateShares>[0];
    let t = 0;
    const told = lateRateShares(log, 60_000, () => t);
    told();
    for (let i = 0; i < 99; i++) told();
    t = 61_000;
    told();
    expect(lines.map((l) => l.fields?.requests)).toEqual([1, 100]);
  });
});
