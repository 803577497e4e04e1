import { describe, expect, it } from 'vitest';
import { createMemoryState } from '../adapters/memory-state';
import { createImRateBudget } from './im-rate-budget';

/** A clock parked 100 ms into a window, so nothing below crosses into the next one. */
const early = () => {
  let now = 1_700_000_000_100;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
};

describe('createImRateBudget', () => {
  it('grants each application its own limit per second, the service default when it has none', async () => {
    const clock = early();
    const limits: Record<string, number> = { shop: 3, news: -1 };
    const budget = createImRateBudget({ state: createMemoryState({ now: clock.now }), limitOf: async (id) => limits[id] ?? -1, defaultLimit: 5 });
    const spend = async (app: string) => {
      let total = 0;
      for (let i = 0; i < 10; i++) total += (await budget.take(app, 1)).granted;
      return total;
    };
    expect(await spend('shop')).toBe(3);
    expect(await spend('news')).toBe(5);
    expect(await budget.take('shop', 1)).toEqual({ limit: 3, granted: 0, windowEndsInMs: 900 });
    clock.advance(900);
    expect((await budget.take('shop', 1)).granted).toBe(1);
  });

  it('grants what a gateway has waiting, first come first served, up to what is left of the second', async () => {
    const budget = createImRateBudget({ state: createMemoryState({ now: early().now }), limitOf: async () => 100, defaultLimit: 5 });
    expect((await budget.take('shop', 60)).granted).toBe(60);
    expect((await budget.take('shop', 0)).granted).toBe(1);
    expect((await budget.take('shop', 60)).granted).toBe(39);
    expect((await budget.take('shop', 1)).granted).toBe(0);
  });

  it('grants whatever is asked for when the limit is 0 (no limit)', async () => {
    const budget = createImRateBudget({ state: createMemoryState(), limitOf: async () => 0, defaultLimit: 5 });
    for (let i = 0; i < 50; i++) expect(await budget.take('shop', 1)).toMatchObject({ limit: 0, granted: 1 });
  });
});
