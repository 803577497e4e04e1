export interface Semaphore {
  /** Runs `work` once fewer than the limit are running; the others wait their turn in arrival order. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** Pieces of work running now. */
  readonly running: number;
  /** Pieces of work waiting their turn. */
  readonly waiting: number;
}

/** At most `limit` pieces of work at a time, the rest taken in arrival order. */
export function createSemaphore(limit: number): Semaphore {
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return {
    async run(work) {
      if (running < limit) running++;
      // A released slot passes straight to the next in line: running stays as it was.
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await work();
      } finally {
        release();
      }
    },
    get running() {
      return running;
    },
    get waiting() {
      return waiting.length;
    },
  };
}
