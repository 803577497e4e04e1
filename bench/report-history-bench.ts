/**
 * The campaign report's history side on its own (issue 13): what the report
 * table costs the writes, and what a report read costs, in CPU seconds of
 * this process (chDB's threads included), a figure the machine's load moves
 * much less than the time. A fresh chDB history directory gets BENCH_MEMBERS
 * campaign messages written as the fan-out writes them (each message with its
 * `accepted` event, then `queued`, `sent`, `submitted` and `received` events,
 * in inserts of BENCH_FLUSH rows, as the journal flushes), then the report is
 * read BENCH_READS times.
 *
 *   npx tsx bench/report-history-bench.ts
 *   BENCH_ROOT=/tmp/main npx tsx bench/report-history-bench.ts   # another checkout's history code (A/B)
 *
 * Knobs: BENCH_MEMBERS (200000), BENCH_FLUSH (20000), BENCH_READS (3),
 * BENCH_ROOT (this checkout). A checkout whose store has no reportRows is
 * read the way its service did: reportRange in pages of 50,000.
 *
 * Each read is made twice, the baseline first: the rows out of the engine
 * then formatted as JSON in JavaScript as the service did before the fourth
 * session (test/support/report-json-reference.ts), and the JSON text as the
 * engine writes it (reportJson), whose bytes go to the client untouched.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { createChdbHistory as CreateChdbHistory } from '../core/adapters/chdb-history';
import type { ReportRecord } from '../core/ports/campaign-store';
import { referenceReportJson } from '../test/support/report-json-reference';

const members = Number(process.env.BENCH_MEMBERS ?? 200_000);
const flushRows = Number(process.env.BENCH_FLUSH ?? 20_000);
const reads = Number(process.env.BENCH_READS ?? 3);
const root = path.resolve(process.env.BENCH_ROOT ?? path.join(import.meta.dirname, '..'));
const CAMPAIGN = 4242;
const PAGE = 50_000;

function campaignMessageId(position: number): string {
  const c = CAMPAIGN.toString(16).padStart(14, '0');
  return `${c.slice(0, 8)}-${c.slice(8, 12)}-8${c.slice(12, 14)}0-8000-0000${position.toString(16).padStart(8, '0')}`;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
function dateTime64(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

const STAGES = [
  ['accepted', 0, 0],
  ['queued', 1, 5],
  ['sent', 2, 10],
  ['submitted', 3, 12],
  ['received', 4, 40],
] as const;

/** Rows of the engine's text are counted by their message id key, with Node's native search (Buffer.indexOf), not per row in JavaScript. */
const ROW_MARK = Buffer.from('"message_id"');
function occurrences(haystack: Buffer, needle: Buffer): number {
  let n = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) n++;
  return n;
}

/** CPU seconds of this process (every thread) and wall seconds of `work`. */
async function measure<T>(work: () => Promise<T>): Promise<{ result: T; cpu: number; wall: number }> {
  const cpu = process.cpuUsage();
  const t = performance.now();
  const result = await work();
  const used = process.cpuUsage(cpu);
  return { result, cpu: (used.user + used.system) / 1e6, wall: (performance.now() - t) / 1000 };
}

async function main(): Promise<void> {
  const { createChdbHistory } = (await import(path.join(root, 'core/adapters/chdb-history.ts'))) as { createChdbHistory: typeof CreateChdbHistory };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-report-bench-'));
  const history = await createChdbHistory({ dataDir });
  const load = (): string => os.loadavg()[0]!.toFixed(1);
  console.log(`report history bench: ${members} campaign messages, inserts of ${flushRows} rows, code from ${root}`);
  try {
    const base = Date.UTC(2026, 10, 24, 10, 0, 0);
    const write = await measure(async () => {
      // The fan-out's order: each slice of messages with their accepted events, then each later status.
      for (let from = 0; from < members; from += flushRows) {
        const to = Math.min(members, from + flushRows);
        for (const [status, stage, after] of STAGES) {
          const messages: string[] = [];
          const events: string[] = [];
          for (let p = from; p < to; p++) {
            const id = campaignMessageId(p);
            const at = dateTime64(base + p + after);
            if (stage === 0) {
              messages.push(
                JSON.stringify({
                  id,
                  num_id: 4096 * 1000 + p,
                  application_id: 'bench',
                  channel: 'sms',
                  direction: 'MT',
                  destination: `+642${String(p).padStart(8, '0')}`,
                  source: 'HERMOD',
                  content: `Hi ${p}, your appointment is tomorrow at 10`,
                  reference: '',
                  message_class: 'promotional',
                  mask: '',
                  sms_class: -1,
                  scheduled_at: dateTime64(0),
                  integration_id: '',
                  via: 'campaign',
                  segments: 1,
                  accepted_at: at,
                }),
              );
            }
            events.push(
              JSON.stringify({
                message_id: id,
                application_id: 'bench',
                status,
                stage,
                at,
                detail: '',
                carrier_id: stage >= 3 ? `c${p}` : '',
                error_code: '',
              }),
            );
          }
          await history.insertEncoded(messages.join('\n'), events.join('\n'));
        }
      }
    });
    console.log(
      `write: ${members} messages, ${members * STAGES.length} events: ${write.cpu.toFixed(2)} s CPU, ${write.wall.toFixed(2)} s (load average ${load()})`,
    );

    const lo = campaignMessageId(0);
    const hi = campaignMessageId(members);
    const look = { listName: 'Hui ā-tau 2026 👋🏽', utcOffsetMinutes: 780 };
    const store = history.campaigns;
    // Baseline, the way the service made the answer before: rows out of the
    // engine, then the gateway's JSON formatting of each row (without the
    // protobuf encoding and decoding in between, which it also paid).
    const rowsThenJavaScript = async (): Promise<{ rows: number; bytes: number }> => {
      let rows = 0;
      let bytes = 0;
      if ('reportRows' in store) {
        for await (const batch of store.reportRows(lo, hi)) {
          rows += batch.length;
          bytes += Buffer.byteLength(referenceReportJson(batch, look.listName, look.utcOffsetMinutes)) + 1;
        }
      } else {
        const legacy = store as { reportRange(lo: string, hi: string): Promise<ReportRecord[]> };
        for (let from = 0; from < members; from += PAGE) {
          const batch = await legacy.reportRange(campaignMessageId(from), campaignMessageId(Math.min(members, from + PAGE)));
          rows += batch.length;
          bytes += Buffer.byteLength(referenceReportJson(batch, look.listName, look.utcOffsetMinutes)) + 1;
        }
      }
      return { rows, bytes: bytes - 1 };
    };
    // This branch: the engine writes the answer's text; nothing per row in JavaScript.
    const engineText = async (): Promise<{ rows: number; bytes: number } | undefined> => {
      if (!('reportJson' in store)) return undefined;
      let bytes = 0;
      let rows = 0;
      let tail = Buffer.alloc(0);
      for await (const chunk of store.reportJson(lo, hi, look)) {
        const b = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        bytes += b.length;
        rows += occurrences(Buffer.concat([tail, b.subarray(0, ROW_MARK.length - 1)]), ROW_MARK) + occurrences(b, ROW_MARK);
        tail = Buffer.from(b.subarray(Math.max(0, b.length - (ROW_MARK.length - 1))));
      }
      return { rows, bytes };
    };
    for (let read = 1; read <= reads; read++) {
      const old = await measure(rowsThenJavaScript);
      console.log(
        `report read ${read}, rows then JSON in JavaScript (baseline): ${old.result.rows} rows, ${(old.result.bytes / 1e6).toFixed(1)} MB: ${old.cpu.toFixed(2)} s CPU, ${old.wall.toFixed(2)} s (load average ${load()})`,
      );
      const now = await measure(engineText);
      if (now.result) {
        console.log(
          `report read ${read}, JSON text from the engine: ${now.result.rows} rows, ${(now.result.bytes / 1e6).toFixed(1)} MB: ${now.cpu.toFixed(2)} s CPU, ${now.wall.toFixed(2)} s (load average ${load()})`,
        );
      }
    }
  } finally {
    await history.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
