/**
 * The cost of asking a queue for its oldest entry: a plain Map asked with a
 * new iterator each time (`map.keys().next()`, what hermod's caps and expiry
 * queues did) against lib/fifo-map.ts's one live iterator, in one run.
 *
 * Two shapes, each at the sizes hermod holds:
 * - a capped cache at its cap: each insert drops the oldest entry (the
 *   callback ledger at 20,000 messages, hot state at 1,000,000 entries);
 * - messages in flight: each leaves from the middle when it finishes, while
 *   each batch looks at the queue's front to expire it (what hot state and
 *   recent messages did at every batch of statuses).
 *
 *   npx tsx bench/fifo-map-bench.ts
 *
 * Knobs: BENCH_OPS operations per row (200000).
 */
import { FifoMap } from '../lib/fifo-map';
import { printTable } from './support/print-table';

const ops = Number(process.env.BENCH_OPS ?? 200_000);

interface Queue {
  set(k: string, v: number): void;
  get(k: string): number | undefined;
  delete(k: string): boolean;
  oldest(): string | undefined;
  readonly size: number;
}

const plain = (): Queue => {
  const m = new Map<string, number>();
  return {
    set: (k, v) => void m.set(k, v),
    get: (k) => m.get(k),
    delete: (k) => m.delete(k),
    oldest: () => m.keys().next().value,
    get size() {
      return m.size;
    },
  };
};

const fifo = (): Queue => {
  const m = new FifoMap<string, number>();
  return {
    set: (k, v) => void m.set(k, v),
    get: (k) => m.get(k),
    delete: (k) => m.delete(k),
    oldest: () => m.oldestKey(),
    get size() {
      return m.size;
    },
  };
};

/** µs per insert into a queue held at `cap` entries by dropping its oldest. */
function capped(make: () => Queue, cap: number): number {
  const q = make();
  let k = 0;
  for (; k < cap; k++) q.set(`m${k}`, k);
  const started = performance.now();
  for (let i = 0; i < ops; i++, k++) {
    q.set(`m${k}`, k);
    while (q.size > cap) q.delete(q.oldest()!);
  }
  return ((performance.now() - started) * 1000) / ops;
}

/**
 * µs per message through hot state's queue of messages in flight: each
 * leaves from the middle (retired: a final status) `inFlight` messages after
 * it came, and the front is expired once per `batch` messages, as hot state
 * and recent messages did on each batch of statuses. The queue held
 * `peak` messages first (a campaign's backlog), so its table is large.
 */
function inFlightQueue(make: () => Queue, peak: number, inFlight: number, batch: number): number {
  const q = make();
  let k = 0;
  for (; k < peak; k++) q.set(`m${k}`, k);
  for (let i = 0; i < peak - inFlight; i++) q.delete(`m${i}`);
  const started = performance.now();
  for (let i = 0; i < ops; i++, k++) {
    q.set(`m${k}`, k);
    q.delete(`m${k - inFlight}`);
    // Expiry looks at the front and stops at the first entry still young (all are: 24 h).
    if (i % batch === 0) void q.get(q.oldest()!);
  }
  return ((performance.now() - started) * 1000) / ops;
}

const rows: string[][] = [];
for (const cap of [20_000, 1_000_000]) {
  const before = capped(plain, cap);
  const after = capped(fifo, cap);
  rows.push([`capped at ${cap.toLocaleString('en')}, one insert`, before.toFixed(2), after.toFixed(2), `${(before / after).toFixed(0)}×`]);
}
// 300 messages in flight after a backlog of 1,000,000; a batch of 1 (a quiet minute) and of 50 (a busy one).
for (const batch of [1, 50]) {
  const before = inFlightQueue(plain, 1_000_000, 300, batch);
  const after = inFlightQueue(fifo, 1_000_000, 300, batch);
  rows.push([
    `in flight after a 1,000,000 backlog, front looked at every ${batch} message(s)`,
    before.toFixed(2),
    after.toFixed(2),
    `${(before / after).toFixed(0)}×`,
  ]);
}
console.log(`\noldest-entry queues, ${ops.toLocaleString('en')} operations per row, node ${process.version}\n`);
printTable(
  [
    { title: 'shape' },
    { title: 'baseline: Map + new iterator, µs/op', align: 'right' },
    { title: 'FifoMap, µs/op', align: 'right' },
    { title: 'faster', align: 'right' },
  ],
  rows,
);
