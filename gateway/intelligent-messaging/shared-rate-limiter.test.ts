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
  const source: RateBudgetSource = async (app, wanted) => {
    calls.push({ app, wanted });
    return budget.take(app, wanted);
  };
  return { gateway: () => createSharedRateLimiter(source, now), calls, advance: (by: number) => void (ms += by) };
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

  it('asks core for a share of up to a tenth of the limit at a time, not once per request', async () => {
    const w = world({ shop: 100 });
    const g = w.gateway();
    expect(await accepted(g, 'shop', 100)).toBe(100);
    // Ten shares of ten, and the first ask that learnt the limit.
    expect(w.calls.length).toBeGreaterThanOrEqual(10);
    expect(w.calls.length).toBeLessThanOrEqual(12);
    for (let i = 0; i < 100; i++) await g.take('shop');
    expect(w.calls.length).toBeLessThanOrEqual(13);
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
});
