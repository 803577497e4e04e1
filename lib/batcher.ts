/**
 * Group commit: items added while a flush is running, or within `maxDelayMs`
 * of the first one, go out together in the next flush. Each `add` resolves
 * with that item's own result once its batch has been flushed.
 */
export interface BatcherOptions {
  maxItems: number;
  maxDelayMs: number;
  /** Flushes allowed to run at the same time. */
  maxConcurrent: number;
}

export interface Batcher<T, R> {
  add(item: T): Promise<R>;
  /**
   * Adds every item, in order: resolves once all of them are flushed, rejects with the first failure. One promise for
   * the lot, not one an item (a batch of status events adds thousands at once).
   */
  addAll(items: readonly T[]): Promise<void>;
  /** Resolves when everything added so far has been flushed. */
  drain(): Promise<void>;
  readonly pending: number;
}

interface Waiting<T, R> {
  item: T;
  resolve(value: R): void;
  reject(err: unknown): void;
}

export function createBatcher<T, R>(flush: (items: T[]) => Promise<R[]>, options: BatcherOptions): Batcher<T, R> {
  let queue: Waiting<T, R>[] = [];
  let running = 0;
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  let drainWaiters: (() => void)[] = [];

  const settleDrain = (): void => {
    if (queue.length === 0 && running === 0) {
      const waiters = drainWaiters;
      drainWaiters = [];
      for (const w of waiters) w();
    }
  };

  const kick = (): void => {
    if (timer) {
      clearTimeout(timer as NodeJS.Timeout);
      clearImmediate(timer as NodeJS.Immediate);
      timer = undefined;
    }
    while (queue.length > 0 && running < options.maxConcurrent) {
      const batch = queue.length <= options.maxItems ? queue : queue.slice(0, options.maxItems);
      queue = batch === queue ? [] : queue.slice(options.maxItems);
      running++;
      run(batch);
    }
  };

  const run = (batch: Waiting<T, R>[]): void => {
    let results: Promise<R[]>;
    try {
      results = flush(batch.map((w) => w.item));
    } catch (err) {
      results = Promise.reject(err);
    }
    results
      .then(
        (values) => {
          for (let i = 0; i < batch.length; i++) batch[i]!.resolve(values[i] as R);
        },
        (err) => {
          for (const w of batch) w.reject(err);
        },
      )
      .finally(() => {
        running--;
        // Whatever queued up during this flush has waited long enough.
        if (queue.length > 0) kick();
        settleDrain();
      });
  };

  const schedule = (): void => {
    if (queue.length >= options.maxItems) {
      kick();
    } else if (running < options.maxConcurrent && !timer) {
      // Zero delay still gathers everything added in the same turn of the event loop.
      timer = options.maxDelayMs <= 0 ? setImmediate(kick) : setTimeout(kick, options.maxDelayMs);
    }
  };

  return {
    add(item: T): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      });
    },
    addAll(items: readonly T[]): Promise<void> {
      if (items.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        let left = items.length;
        let failed = false;
        const settled = (): void => {
          if (--left === 0 && !failed) resolve();
        };
        const fail = (err: unknown): void => {
          if (!failed) {
            failed = true;
            reject(err);
          }
        };
        for (const item of items) {
          queue.push({ item, resolve: settled, reject: fail });
          schedule();
        }
      });
    },
    drain(): Promise<void> {
      if (queue.length === 0 && running === 0) return Promise.resolve();
      kick();
      return new Promise((resolve) => drainWaiters.push(resolve));
    },
    get pending() {
      return queue.length + running;
    },
  };
}
