/**
 * The journal's cost per row to encode a batch (core/history/journal-lines.ts),
 * in one run: the baseline encodes the batch's journal lines and its engine rows
 * as two whole-batch Buffers, each from one string (what the journal did until
 * the fourteenth session); hermod now encodes the rows once, in pieces of at
 * most 64 rows, and copies each piece into journal lines.
 *
 * It runs under the malloc settings hermod's processes get (lib/malloc-env.ts;
 * it starts itself again with them when they are missing), since the
 * difference is there: a whole-batch Buffer is above malloc's mmap threshold,
 * so each batch maps fresh pages and faults them in.
 *
 *   npx tsx bench/journal-encode-bench.ts
 *
 * Knobs: BENCH_ROWS rows encoded per figure (600000).
 */
import { spawnSync } from 'node:child_process';
import { encodeBatch } from '../core/history/journal-lines';
import { mallocEnv } from '../lib/malloc-env';
import { nsPerRow } from './support/ns-per-row';
import { printTable } from './support/print-table';

const missing = mallocEnv(process.env);
if (Object.keys(missing).length > 0) {
  const again = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { env: { ...process.env, ...missing }, stdio: 'inherit' });
  process.exit(again.status ?? 1);
}

const total = Number(process.env.BENCH_ROWS ?? 600_000);

/** A message row and two event rows a message, as a campaign's batches hold them; every third text te reo Māori, an emoji and CJK. */
function rowsOf(messages: number): { messages: string[]; events: string[] } {
  const id = (i: number) => `0190f1c2-7b3a-8${String(i % 1000).padStart(3, '0')}-8000-0000${String(i).padStart(8, '0')}`;
  const at = '2026-11-27 22:00:00.000';
  return {
    messages: Array.from({ length: messages }, (_, i) =>
      JSON.stringify({
        id: id(i),
        num_id: 1_234_567 + i,
        application_id: 'app-0190f1c2',
        channel: 'sms',
        direction: 'MT',
        destination: `+642112${String(i).padStart(5, '0')}`,
        source: 'HERMOD',
        content: i % 3 === 0 ? `Kia ora, e hoa mā 👋🏽 你好 ${i}` : `Your code is ${i}. Reply STOP to opt out.`,
        scheduled_at: at,
        accepted_at: at,
        segments: 1,
      }),
    ),
    events: Array.from({ length: messages * 2 }, (_, i) =>
      JSON.stringify({
        message_id: id(i >> 1),
        application_id: 'app-0190f1c2',
        status: i % 2 ? 'submitted' : 'queued',
        stage: 2 + (i % 2),
        at,
        carrier_id: `c${i}`,
      }),
    ),
  };
}

/** The baseline: the whole batch as one string, encoded twice (journal lines, then the engine's rows). */
function wholeBatch(messages: readonly string[], events: readonly string[]): Buffer[] {
  let lines = '';
  for (const r of events) lines += `E${r}\n`;
  for (const r of messages) lines += `M${r}\n`;
  const rows = (list: readonly string[]) => {
    let text = '';
    for (const r of list) text += `${r}\n`;
    return Buffer.from(text, 'utf8');
  };
  return [Buffer.from(lines, 'utf8'), rows(messages), rows(events)];
}

const rows: (string | number)[][] = [];
for (const messages of [20, 100, 400, 2000]) {
  const batch = rowsOf(messages);
  const whole = Buffer.concat(wholeBatch(batch.messages, batch.events).slice(0, 1));
  if (!whole.equals(Buffer.concat(encodeBatch(batch.messages, batch.events).journal))) throw new Error('the two encodings differ');
  const baseline = nsPerRow(wholeBatch, batch, total);
  const pieces = nsPerRow(encodeBatch, batch, total);
  rows.push([
    `${messages} messages (${messages * 3} rows, ${Math.round(whole.length / 1024)} KB of journal)`,
    baseline.toFixed(0),
    pieces.toFixed(0),
    `${(baseline / pieces).toFixed(2)}×`,
  ]);
}
console.log(
  `journal encoding, ${total} rows per figure, node ${process.version}, ${Object.entries(mallocEnv({}))
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}\n`,
);
printTable(
  [
    { title: 'batch' },
    { title: 'baseline: whole batch, encoded twice, ns/row', align: 'right' },
    { title: 'pieces of 64 rows, encoded once, ns/row', align: 'right' },
    { title: 'faster', align: 'right' },
  ],
  rows,
);
