import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batcherContract } from './batcher-contract';
import { createVoidBatcher } from './void-batcher';

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('a batcher of flushes without results', () => {
  it('gathers items added in the same turn into one flush, one promise for them all', async () => {
    const flushes: string[][] = [];
    const b = createVoidBatcher<string>(
      async (items) => {
        flushes.push([...items]);
      },
      { maxItems: 100, maxDelayMs: 0, maxConcurrent: 1 },
    );
    const added = ['Kia ora', 'tēnā koe', '你好 👋🏽'].map((x) => b.add(x));
    expect(added[1]).toBe(added[0]);
    await Promise.all(added);
    expect(flushes).toEqual([['Kia ora', 'tēnā koe', '你好 👋🏽']]);
  });

  batcherContract(createVoidBatcher);

  it('flushes every item once, in order, in flushes of at most maxItems, and settles each add as its own flush ended', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          maxItems: fc.integer({ min: 1, max: 6 }),
          maxConcurrent: fc.integer({ min: 1, max: 3 }),
          // Per step: how many items to add at once (0: let a turn pass), and whether adding them is one addAll.
          steps: fc.array(fc.tuple(fc.integer({ min: 0, max: 8 }), fc.boolean()), { minLength: 1, maxLength: 25 }),
          // Flushes (by their number) that fail.
          failing: fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 8 }),
        }),
        async ({ maxItems, maxConcurrent, steps, failing }) => {
          const flushes: number[][] = [];
          let concurrent = 0;
          let mostConcurrent = 0;
          const b = createVoidBatcher<number>(
            async (items) => {
              const n = flushes.push([...items]) - 1;
              mostConcurrent = Math.max(mostConcurrent, ++concurrent);
              await turn();
              concurrent--;
              if (failing.includes(n)) throw new Error(`flush ${n} failed`);
            },
            { maxItems, maxDelayMs: 0, maxConcurrent },
          );
          const outcomes = new Map<number, Promise<'ok' | 'failed'>>();
          let next = 0;
          for (const [count, together] of steps) {
            if (count === 0) {
              await turn();
              continue;
            }
            const items = Array.from({ length: count }, () => next++);
            const settled = (p: Promise<void>) =>
              p.then(
                () => 'ok' as const,
                () => 'failed' as const,
              );
            if (together) {
              const all = settled(b.addAll(items));
              for (const i of items) outcomes.set(-1 - i, all);
            } else for (const i of items) outcomes.set(i, settled(b.add(i)));
          }
          await b.drain();
          expect(flushes.flat()).toEqual(Array.from({ length: next }, (_, i) => i));
          expect(flushes.every((f) => f.length >= 1 && f.length <= maxItems)).toBe(true);
          expect(mostConcurrent).toBeLessThanOrEqual(maxConcurrent);
          const failedItems = new Set(flushes.flatMap((f, n) => (failing.includes(n) ? f : [])));
          for (const [key, outcome] of outcomes) {
            if (key >= 0) expect(await outcome).toBe(failedItems.has(key) ? 'failed' : 'ok');
          }
          // An addAll fails when any of its items' flushes failed.
          const groups = new Map<Promise<'ok' | 'failed'>, number[]>();
          for (const [key, outcome] of outcomes) if (key < 0) groups.set(outcome, [...(groups.get(outcome) ?? []), -1 - key]);
          for (const [outcome, items] of groups) expect(await outcome).toBe(items.some((i) => failedItems.has(i)) ? 'failed' : 'ok');
          expect(b.pending).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
