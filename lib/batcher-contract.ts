import { expect, it } from 'vitest';
import type { Batcher, BatcherOptions } from './batcher';

/** Makes a batcher of the kind under test whose flush has no result of its own. */
export type VoidBatcherFactory = <T>(flush: (items: T[]) => Promise<void>, options: BatcherOptions) => Batcher<T, void>;

/**
 * What every batcher does, whatever its results: call it inside a `describe`
 * of a `*.test.ts` with a factory (createBatcher's flush answering each item
 * with nothing, or createVoidBatcher).
 */
export function batcherContract(make: VoidBatcherFactory): void {
  it('never puts more than maxItems into one flush', async () => {
    const sizes: number[] = [];
    const b = make<number>(
      async (items) => {
        sizes.push(items.length);
      },
      { maxItems: 10, maxDelayMs: 5, maxConcurrent: 2 },
    );
    await Promise.all(Array.from({ length: 35 }, (_, i) => b.add(i)));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(10);
    expect(sizes.reduce((a, x) => a + x, 0)).toBe(35);
  });

  it('rejects every item of a batch whose flush failed, and keeps working afterwards', async () => {
    let fail = true;
    const b = make<string>(
      async () => {
        if (fail) throw new Error('disk full');
      },
      { maxItems: 10, maxDelayMs: 0, maxConcurrent: 1 },
    );
    await expect(Promise.all([b.add('Kia ora'), b.add('你好')])).rejects.toThrow('disk full');
    fail = false;
    await expect(b.add('tēnā koe 👋🏽')).resolves.toBeUndefined();
  });

  it('adds many with one promise that resolves once every one is flushed, in order, across several flushes', async () => {
    const flushed: number[][] = [];
    const b = make<number>(
      async (items) => {
        await new Promise((r) => setTimeout(r, 5));
        flushed.push([...items]);
      },
      { maxItems: 4, maxDelayMs: 0, maxConcurrent: 1 },
    );
    await b.addAll([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(flushed.flat()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(Math.max(...flushed.map((f) => f.length))).toBeLessThanOrEqual(4);
    await expect(b.addAll([])).resolves.toBeUndefined();
  });

  it('rejects adding many once a flush holding any of them fails, and only once', async () => {
    const b = make<number>(
      async (items) => {
        if (items.includes(6)) throw new Error('disk full');
      },
      { maxItems: 3, maxDelayMs: 0, maxConcurrent: 2 },
    );
    await expect(b.addAll([1, 2, 3, 4, 5, 6, 7, 8, 9])).rejects.toThrow('disk full');
    await expect(b.addAll([1, 2])).resolves.toBeUndefined();
  });

  it('drain waits for items still being flushed', async () => {
    let done = 0;
    const b = make<number>(
      async (items) => {
        await new Promise((r) => setTimeout(r, 20));
        done += items.length;
      },
      { maxItems: 2, maxDelayMs: 50, maxConcurrent: 1 },
    );
    for (let i = 0; i < 5; i++) void b.add(i);
    await b.drain();
    expect(done).toBe(5);
    expect(b.pending).toBe(0);
  });
}
