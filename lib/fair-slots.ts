/** Work that holds a slot: `turn()` between its steps lets work of another key that waits go first. */
export type TakeTurns = () => Promise<void>;

export interface FairSlots {
  /**
   * Runs `work` in one of the slots, for `key`. When a slot frees, it goes to
   * the waiting work whose key holds the fewest slots; among those, to work
   * that had a slot and gave it up at a turn (it holds what it read), then to
   * the oldest. `turn()` gives the slot up, and waits for one again, when
   * work of a key holding fewer slots waits.
   */
  run<T>(key: string | number, work: (turn: TakeTurns) => Promise<T>): Promise<T>;
  /** Slots held per key (for tests and gauges). */
  held(key: string | number): number;
}

interface Waiter {
  key: string | number;
  /** Had a slot before (gave it up at a turn). */
  started: boolean;
  seq: number;
  resolve: () => void;
}

/**
 * At most `limit` pieces of work at a time, shared fairly between keys: one
 * key's long queue (a million-member campaign's partitions) does not hold up
 * another key's work (a two-member campaign scheduled a moment later) for
 * longer than one step of the work running.
 */
export function createFairSlots(limit: number): FairSlots {
  const running = new Map<string | number, number>();
  let total = 0;
  const waiting: Waiter[] = [];
  let seq = 0;
  const heldBy = (key: string | number): number => running.get(key) ?? 0;
  const take = (key: string | number): void => {
    running.set(key, heldBy(key) + 1);
    total++;
  };
  const give = (key: string | number): void => {
    const n = heldBy(key) - 1;
    if (n > 0) running.set(key, n);
    else running.delete(key);
    total--;
  };
  const better = (a: Waiter, b: Waiter): boolean => {
    const [ha, hb] = [heldBy(a.key), heldBy(b.key)];
    if (ha !== hb) return ha < hb;
    if (a.started !== b.started) return a.started;
    return a.seq < b.seq;
  };
  /** A slot freed: to the best waiter, if any; a slot given up at a turn, to the best of another key. */
  const passOn = (givenUpBy?: string | number): void => {
    if (waiting.length === 0 || total >= limit) return;
    let best = -1;
    for (let i = 0; i < waiting.length; i++) {
      if (waiting[i]!.key === givenUpBy) continue;
      if (best < 0 || better(waiting[i]!, waiting[best]!)) best = i;
    }
    if (best < 0) best = 0;
    const [next] = waiting.splice(best, 1);
    take(next!.key);
    next!.resolve();
  };
  const acquire = (key: string | number, started: boolean): Promise<void> => {
    if (total < limit && waiting.length === 0) {
      take(key);
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      waiting.push({ key, started, seq: seq++, resolve });
      passOn();
    });
  };
  const release = (key: string | number, atTurn = false): void => {
    give(key);
    passOn(atTurn ? key : undefined);
  };
  return {
    async run(key, work) {
      await acquire(key, false);
      const turn: TakeTurns = async () => {
        const mine = heldBy(key);
        if (!waiting.some((w) => w.key !== key && heldBy(w.key) < mine)) return;
        // To the key that waits, not back to another piece of this one (it holds as few slots as that key now).
        release(key, true);
        await acquire(key, true);
      };
      try {
        return await work(turn);
      } finally {
        release(key);
      }
    },
    held: heldBy,
  };
}
