import type { Batcher, BatcherOptions } from './batcher';

/** Items that go out in one flush, and the one promise every `add` of them gets. */
interface Batch<T> {
  items: T[];
  done: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function newBatch<T>(): Batch<T> {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { items: [], done, resolve, reject };
}

/**
 * Group commit for flushes with no result of their own (history events, bus
 * publishes, carrier ids): as createBatcher, but the items of one flush share
 * one promise, made with their batch, instead of a promise, its two
 * functions and a waiting entry for every item. Core adds some ten items a
 * message to batchers like these. Items are assigned to their flush as they
 * are added: one of at most `maxItems`, gathered within `maxDelayMs` of its
 * first item or while `maxConcurrent` flushes run, as createBatcher gathers them.
 */
export function createVoidBatcher<T>(flush: (items: T[]) => Promise<void>, options: BatcherOptions): Batcher<T, void> {
  const maxItems = Math.max(1, options.maxItems);
  /** Full batches waiting for a flush, oldest first, then the one still filling. */
  const ready: Batch<T>[] = [];
  let open: Batch<T> | undefined;
  let running = 0;
  let waiting = 0;
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  let drainWaiters: (() => void)[] = [];

  const settleDrain = (): void => {
    if (waiting > 0 || running > 0) return;
    const waiters = drainWaiters;
    drainWaiters = [];
    for (const w of waiters) w();
  };

  const next = (): Batch<T> | undefined => {
    if (ready.length > 0) return ready.shift();
    const batch = open;
    open = undefined;
    return batch;
  };

  const kick = (): void => {
    if (timer) {
      clearTimeout(timer as NodeJS.Timeout);
      clearImmediate(timer as NodeJS.Immediate);
      timer = undefined;
    }
    while (running < options.maxConcurrent) {
      const batch = next();
      if (!batch) return;
      waiting -= batch.items.length;
      running++;
      run(batch);
    }
  };

  const settle = (batch: Batch<T>, failed: boolean, err: unknown): void => {
    if (failed) batch.reject(err);
    else batch.resolve();
    running--;
    // Whatever gathered during this flush has waited long enough.
    if (waiting > 0) kick();
    settleDrain();
  };

  const run = (batch: Batch<T>): void => {
    let flushed: Promise<void>;
    try {
      flushed = flush(batch.items);
    } catch (err) {
      flushed = Promise.reject(err);
    }
    flushed.then(
      () => settle(batch, false, undefined),
      (err: unknown) => settle(batch, true, err),
    );
  };

  const schedule = (): void => {
    if (ready.length > 0) {
      kick();
    } else if (running < options.maxConcurrent && !timer) {
      // Zero delay still gathers everything added in the same turn of the event loop.
      timer = options.maxDelayMs <= 0 ? setImmediate(kick) : setTimeout(kick, options.maxDelayMs);
    }
  };

  /** The batch `item` goes out in. */
  const place = (item: T): Batch<T> => {
    open ??= newBatch();
    const batch = open;
    batch.items.push(item);
    waiting++;
    if (batch.items.length >= maxItems) {
      ready.push(batch);
      open = undefined;
    }
    return batch;
  };

  return {
    add(item: T): Promise<void> {
      const batch = place(item);
      schedule();
      return batch.done;
    },
    addAll(items: readonly T[]): Promise<void> {
      if (items.length === 0) return Promise.resolve();
      const batches: Batch<T>[] = [];
      for (const item of items) {
        const batch = place(item);
        if (batches[batches.length - 1] !== batch) batches.push(batch);
      }
      schedule();
      return batches.length === 1 ? batches[0]!.done : Promise.all(batches.map((b) => b.done)).then(() => undefined);
    },
    drain(): Promise<void> {
      if (waiting === 0 && running === 0) return Promise.resolve();
      kick();
      return new Promise((resolve) => drainWaiters.push(resolve));
    },
    get pending() {
      return waiting + running;
    },
  };
}
