import { describe, expect, it } from 'vitest';
import { createBatcher } from './batcher';
import { batcherContract } from './batcher-contract';

describe('batcher', () => {
  it('gathers items added in the same turn into one flush and answers each with its own result', async () => {
    const flushes: number[][] = [];
    const b = createBatcher<number, number>(
      async (items) => {
        flushes.push(items);
        return items.map((x) => x * 2);
      },
      { maxItems: 100, maxDelayMs: 0, maxConcurrent: 1 },
    );
    const results = await Promise.all([1, 2, 3].map((x) => b.add(x)));
    expect(results).toEqual([2, 4, 6]);
    expect(flushes).toEqual([[1, 2, 3]]);
  });

  batcherContract((flush, options) =>
    createBatcher(async (items) => {
      await flush(items);
      return items.map(() => undefined);
    }, options),
  );
});
