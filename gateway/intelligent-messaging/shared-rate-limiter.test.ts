import { describe, expect, it } from 'vitest';
import { createMemoryState } from '../../core/adapters/memory-state';
import { createImRateBudget } from '../../core/im/im-rate-budget';
import { createSharedRateLimiter, type RateBudgetSource } from './shared-rate-limiter';

/** Core's budget on one hand-moved clock, which the gateways' limiters share, starting 100 ms into a window. */
function world(limits: Record<string, number>, defaultLimit = 0) {
  let ms = 1_700_000_000_100;
  const now = () => ms;
  const budget = createImRateBudget({ state: createMemoryState({ now }), limitOf: async (id) => limits[id] ?? -1, defaultLimit });
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

  it('accepts requests within the limit when core answers after the window it counted them in has ended', async () => {
    // A core answering in 700 ms: most answers describe a window already over when they arrive.
    const w = world({ shop: 100 });
    w.slowAnswers(700);
    const g = w.gateway();
    const verdicts = await Promise.all(Array.from({ length: 60 }, () => g.take('shop')));
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
  });

  it('spends a late answer only on requests that arrived before the window it counted them in ended', async () => {
    const w = world({ shop: 10 });
    w.slowAnswers(700);
    const g = w.gateway();
    // Five arrive 100 ms into a window; core's answer to them comes back 800 ms in.
    expect(await accepted(g, 'shop', 5)).toBe(5);
    // A request 1.2 s after the first ones asks again (its window is new) rather than spend what is left.
    w.slowAnswers(0);
    w.advance(500);
    await g.take('shop');
    expect(w.calls).toHaveLength(3);
  });
});
