/**
 * The history's cost per row to turn a batch of records into the journal's
 * lines and the engine's rows (core/history/journal-lines.ts), in one run:
 * the baseline makes each row an object, `JSON.stringify`s it and encodes
 * the strings (`encodeBatch`, what the journal did until the nineteenth
 * session); hermod now writes the rows' bytes straight from the records
 * (`encodeRecords`). Both give the same bytes: the bench checks it.
 *
 * The batch is a campaign's: a message row and five event rows a message
 * (accepted, queued, sent, submitted with its carrier id and route, received),
 * every third text te reo Māori, an emoji and CJK.
 *
 *   npx tsx bench/history-rows-bench.ts
 *
 * Knobs: BENCH_ROWS rows encoded per figure (600000), BENCH_ROUNDS (3).
 */
import { spawnSync } from 'node:child_process';
import { encodeBatch, encodeRecords } from '../core/history/journal-lines';
import { eventRow, messageRow } from '../core/history/rows';
import type { MessageRecord, StatusEvent } from '../core/ports/message-history';
import { mallocEnv } from '../lib/malloc-env';
import { nsPerRow } from './support/ns-per-row';
import { printTable } from './support/print-table';

const missing = mallocEnv(process.env);
if (Object.keys(missing).length > 0) {
  const again = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { env: { ...process.env, ...missing }, stdio: 'inherit' });
  process.exit(again.status ?? 1);
}

const total = Number(process.env.BENCH_ROWS ?? 600_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

function batchOf(count: number): { messages: MessageRecord[]; events: StatusEvent[] } {
  const id = (i: number) => `0190f1c2-7b3a-8${String(i % 1000).padStart(3, '0')}-8000-0000${String(i).padStart(8, '0')}`;
  const applicationId = '0190f1c2-7b3a-7000-8000-000000000001';
  const at = Date.parse('2026-11-28T18:00:00.000Z');
  const messages = Array.from(
    { length: count },
    (_, i): MessageRecord => ({
      id: id(i),
      numericId: 1_234_567 + i,
      applicationId,
      channel: 'sms',
      direction: 'MT',
      destination: `+642112${String(i).padStart(5, '0')}`,
      source: 'HERMOD',
      content: i % 3 === 0 ? `Kia ora, e hoa mā 👋🏽 你好 ${i}` : `Your code is ${i}. Reply STOP to opt out.`,
      reference: '',
      messageClass: '',
      mask: '',
      smsClass: -1,
      scheduledAt: 0,
      integrationId: '',
      via: 'campaign',
      segments: 1,
      acceptedAt: at + i,
      replyTo: '',
    }),
  );
  const events = messages.flatMap((m, i): StatusEvent[] => {
    const e = (status: StatusEvent['status'], ms: number, carrierId = '', detail = ''): StatusEvent => ({
      messageId: m.id,
      applicationId,
      status,
      at: m.acceptedAt + ms,
      detail,
      carrierId,
      errorCode: '',
    });
    const carrierId = `smsc-1:${(7_000_000 + i).toString(16)}`;
    return [e('accepted', 0), e('queued', 0), e('sent', 3), e('submitted', 5, carrierId, 'route default → carrier smsc-1'), e('received', 25, carrierId)];
  });
  return { messages, events };
}

const stringified = (messages: readonly MessageRecord[], events: readonly StatusEvent[]) =>
  encodeBatch(
    messages.map((m) => JSON.stringify(messageRow(m))),
    events.map((e) => JSON.stringify(eventRow(e))),
  );

const rows: (string | number)[][] = [];
for (let round = 1; round <= rounds; round++) {
  for (const messages of [20, 400, 2000]) {
    const batch = batchOf(messages);
    const [a, b] = [stringified(batch.messages, batch.events), encodeRecords(batch.messages, batch.events)];
    for (const part of ['journal', 'messages', 'events'] as const) {
      if (!Buffer.concat(a[part]).equals(Buffer.concat(b[part]))) throw new Error(`the two encodings differ in ${part}`);
    }
    const baseline = nsPerRow(stringified, batch, total);
    const written = nsPerRow(encodeRecords, batch, total);
    rows.push([round, `${messages} messages (${messages * 6} rows)`, baseline.toFixed(0), written.toFixed(0), `${(baseline / written).toFixed(2)}×`]);
  }
}
console.log(`history rows from records, ${total} rows per figure, node ${process.version}\n`);
printTable(
  [
    { title: 'round' },
    { title: 'batch' },
    { title: 'baseline: JSON.stringify of row objects, then encodeBatch, ns/row', align: 'right' },
    { title: 'encodeRecords, written from the records, ns/row', align: 'right' },
    { title: 'faster', align: 'right' },
  ],
  rows,
);
