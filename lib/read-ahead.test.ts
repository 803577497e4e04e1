import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readAhead } from './read-ahead';

/** A source that logs when each item is asked for and when it is handed over. */
function loggedSource<T>(items: readonly T[], log: string[], failAt = -1): AsyncIterable<T> {
  return {
    async *[Symbol.asyncIterator]() {
      try {
        for (let i = 0; i < items.length; i++) {
          log.push(`fetch ${i}`);
          await new Promise((r) => setTimeout(r, 1));
          if (i === failAt) throw new Error(`fetch ${i} failed`);
          yield items[i]!;
        }
      } finally {
        log.push('source closed');
      }
    },
  };
}

describe('reading one item ahead of the consumer', () => {
  it('asks the source for the next item while the consumer still handles the one before', async () => {
    const log: string[] = [];
    for await (const item of readAhead(loggedSource(['Kia ora', '你好', '👋🏽'], log))) {
      log.push(`handle ${item}`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(`handled ${item}`);
    }
    // Fetch 1 starts before item 0's handling ends: engine work and sending overlap.
    expect(log.indexOf('fetch 1')).toBeLessThan(log.indexOf('handled Kia ora'));
    expect(log.indexOf('fetch 2')).toBeLessThan(log.indexOf('handled 你好'));
    expect(log.filter((l) => l === 'source closed')).toHaveLength(1);
  });

  it('gives every item once, in order, whatever the source holds (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 20 }), async (items) => {
        const seen: string[] = [];
        for await (const item of readAhead(loggedSource(items, []))) seen.push(item);
        expect(seen).toEqual(items);
      }),
      { numRuns: 50 },
    );
  });

  it('closes the source, after the item it was fetching, when the consumer stops early', async () => {
    const log: string[] = [];
    for await (const item of readAhead(loggedSource([1, 2, 3, 4], log))) {
      if (item === 2) break;
    }
    expect(log).toEqual(['fetch 0', 'fetch 1', 'fetch 2', 'source closed']);
  });

  it('passes a failed fetch to the consumer at the item it would have been', async () => {
    const seen: number[] = [];
    const read = async () => {
      for await (const item of readAhead(loggedSource([1, 2, 3], [], 2))) seen.push(item);
    };
    await expect(read()).rejects.toThrow('fetch 2 failed');
    expect(seen).toEqual([1, 2]);
  });
});
