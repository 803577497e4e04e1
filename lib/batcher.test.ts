import { describe, expect, it } from 'vitest';
import { createBatcher } from './batcher';

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

  it('never puts more than maxItems into one flush', async () => {
    const sizes: number[] = [];
    const b = createBatcher<number, void>(
      async (items) => {
        sizes.push(items.length);
        return items.map(() => undefined);
      },
      { maxItems: 10, maxDelayMs: 5, maxConcurrent: 2 },
    );
    await Promise.all(Array.from({ length: 35 }, (_, i) => b.add(i)));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(10);
    expect(sizes.reduce((a, x) => a + x, 0)).toBe(35);
  });

  it('rejects every item of a batch whose flush failed, and keeps working afterwards', async () => {
    let fail = true;
    const b = createBatcher<number, number>(
      async (items) => {
        if (fail) throw new Error('disk full');
        return items;
      },
      { maxItems: 10, maxDelayMs: 0, maxConcurrent: 1 },
    );
    await expect(b.add(1)).rejects.toThrow('disk full');
    fail = false;
    await expect(b.add(2)).resolves.toBe(2);
  });

  it('adds many items with one promise that resolves once every one is flushed, in order, across several flushes', async () => {
    const flushed: number[][] = [];
    const b = createBatcher<number, void>(
      async (items) => {
        await new Promise((r) => setTimeout(r, 5));
        flushed.push([...items]);
        return items.map(() => undefined);
      },
      { maxItems: 4, maxDelayMs: 0, maxConcurrent: 1 },
    );
    await b.addAll([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(flushed.flat()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(Math.max(...flushed.map((f) => f.length))).toBeLessThanOrEqual(4);
    await expect(b.addAll([])).resolves.toBeUndefined();
  });

  it('rejects adding many once a flush holding any of them fails, and only once', async () => {
    const b = createBatcher<number, void>(
      async (items) => {
        if (items.includes(6)) throw new Error('disk full');
        return items.map(() => undefined);
      },
      { maxItems: 3, maxDelayMs: 0, maxConcurrent: 2 },
    );
    await expect(b.addAll([1, 2, 3, 4, 5, 6, 7, 8, 9])).rejects.toThrow('disk full');
    await expect(b.addAll([1, 2])).resolves.toBeUndefined();
  });

  it('drain waits for items still being flushed', async () => {
    let done = 0;
    const b = createBatcher<number, void>(
      async (items) => {
        await new Promise((r) => setTimeout(r, 20));
        done += items.length;
        return items.map(() => undefined);
      },
      { maxItems: 2, maxDelayMs: 50, maxConcurrent: 1 },
    );
    for (let i = 0; i < 5; i++) void b.add(i);
    await b.drain();
    expect(done).toBe(5);
  });
});
