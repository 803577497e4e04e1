import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryState } from '../../core/adapters/memory-state';
import { createRedisState } from '../../core/adapters/redis-state';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from '../../test/support/redis-keys';
import { createSubmitRate, slotShare } from './submit-rate';

describe("a carrier's submit rate", () => {
  it('hands out exactly the limit over the twenty slots of a second, at most a twentieth (rounded up) in one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), (limit) => {
        const shares = Array.from({ length: 20 }, (_, i) => slotShare(limit, i));
        expect(shares.reduce((a, b) => a + b, 0)).toBe(limit);
        expect(Math.max(...shares)).toBeLessThanOrEqual(Math.ceil(limit / 20));
        expect(Math.min(...shares)).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it.each([
    ['in-process', async () => ({ states: [createMemoryState()].flatMap((s) => [s, s]), done: async () => undefined })],
    [
      'Redis',
      async () => {
        const prefix = randomPrefix('submit-rate');
        // Two connections, as two worker processes would have.
        const states = [createRedisState({ redis: REDIS_URL, prefix }), createRedisState({ redis: REDIS_URL, prefix })];
        return {
          states,
          done: async () => {
            for (const s of states) await s.close();
            await deleteRedisKeys(prefix);
          },
        };
      },
    ],
  ])('lets no sliding second hold more than the limit and one slot, with two workers sharing %s hot state', async (_, open) => {
    const { states, done } = await open();
    const workers = states.map((state) => createSubmitRate(state, 'bravo', 40));
    const at: number[] = [];
    await Promise.all(workers.flatMap((w) => Array.from({ length: 60 }, () => w.take(1).then(() => at.push(Date.now())))));
    at.sort((a, b) => a - b);
    let peak = 0;
    for (let i = 0, j = 0; i < at.length; i++) {
      while (at[j]! <= at[i]! - 1000) j++;
      peak = Math.max(peak, i - j + 1);
    }
    expect(at).toHaveLength(120);
    expect(peak).toBeLessThanOrEqual(42);
    // 120 at 40/s cannot take less than two seconds.
    expect(at.at(-1)! - at[0]!).toBeGreaterThanOrEqual(1900);
    await done();
  });
});
