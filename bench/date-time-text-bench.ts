/**
 * The history rows' time text (core/history/rows.ts dateTime64), called as a
 * campaign's rows call it: a message row's scheduled time (0) and acceptance
 * time, then its status events a few milliseconds apart, all within a few
 * seconds. Against the baseline in the same run: `toISOString()` at each
 * call, which is what the last-value cache came to when a message row's
 * scheduled time (0) and acceptance time alternated (eighteenth session).
 *
 *   npx tsx bench/date-time-text-bench.ts
 *
 * Knobs: BENCH_ROWS message rows per figure (1000000).
 */
import { dateTime64 } from '../core/history/rows';
import { printTable } from './support/print-table';

const rows = Number(process.env.BENCH_ROWS ?? 1_000_000);
const EVENTS = 4;

const baseline = (ms: number): string => {
  const iso = new Date(Math.trunc(ms)).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
};

/** ns per message row and its events. */
function measure(format: (ms: number) => string): number {
  const start = Date.now();
  let length = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rows; i++) {
    const acceptedAt = start + Math.floor(i / 100);
    length += format(0).length + format(acceptedAt).length;
    for (let e = 0; e < EVENTS; e++) length += format(acceptedAt + e * 7).length;
  }
  const ns = Number(process.hrtime.bigint() - t0) / rows;
  if (length === 0) throw new Error('nothing formatted');
  return ns;
}

const figures: string[][] = [];
for (let round = 1; round <= 3; round++) {
  const before = measure(baseline);
  const now = measure(dateTime64);
  figures.push([String(round), before.toFixed(0), now.toFixed(0), (before / now).toFixed(1)]);
}
console.log(`time text of ${rows.toLocaleString('en')} message rows, each with ${EVENTS} events (ns a message row and its events), node ${process.version}`);
printTable(
  [
    { title: 'round' },
    { title: 'baseline: toISOString each call', align: 'right' },
    { title: 'hermod: dateTime64', align: 'right' },
    { title: 'times faster', align: 'right' },
  ],
  figures,
);
