/**
 * What one callback costs core's main thread, in one process: the whole
 * pipeline (outbox journal, per-message and per-application queues, the
 * dispatcher, the hand-over to the delivery threads, the settle) against its
 * baseline in the same run, the delivery pool alone (the same threads posting
 * the same bodies to the same receiver, nothing kept or queued).
 *
 * The main thread's CPU is read from /proc (Linux), so the delivery threads'
 * HTTP and the receiver's (a thread of its own) do not hide it, and time it
 * waits for a core is not counted.
 *
 *   npx tsx bench/callback-pipeline-bench.ts
 *
 * Knobs: BENCH_CALLBACKS per row (40000), BENCH_BATCH jobs owed per turn, as
 * a recorded batch of statuses makes them (100), BENCH_THREADS delivery
 * threads (2), BENCH_ROUNDS alternated rounds (2).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { accountsInMemory } from '../core/accounts/accounts-test-kit';
import { createMemoryBus } from '../core/adapters/memory-bus';
import { openCallbackOutbox } from '../core/callbacks/callback-outbox';
import { startCallbackDispatcher } from '../core/callbacks/callback-dispatcher';
import { createCallbackLedger } from '../core/callbacks/callback-ledger';
import { startCallbackDeliveryPool } from '../core/callbacks/callback-delivery-pool';
import type { CallbackJob } from '../core/callbacks/callback-job';
import { createLogger } from '../lib/log';
import { printTable } from './support/print-table';

const total = Number(process.env.BENCH_CALLBACKS ?? 40_000);
const batch = Number(process.env.BENCH_BATCH ?? 100);
const threads = Number(process.env.BENCH_THREADS ?? 2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const log = createLogger({ bench: 'callback-pipeline' });

/** The receiver answers 200 at once, on a thread of its own so its work is not counted as the main thread's. */
const receiverThread = new Worker(
  `const http = require('node:http');
   const { parentPort } = require('node:worker_threads');
   const server = http.createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200, { 'content-length': '0' }).end()); });
   server.keepAliveTimeout = 60000;
   server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));`,
  { eval: true },
);
const port = await new Promise<number>((r) => receiverThread.once('message', r));
const url = `http://127.0.0.1:${port}/status`;

const body = (i: number) => ({ id: `m-${i}`, message_id: `m-${i}`, status: 'delivered', detail: '+64211234567', reference: `Kia ora, e hoa mā 👋🏽 ${i}` });

interface Row {
  what: string;
  seconds: number;
  mainUs: number;
  processUs: number;
}

/** CPU ms the main thread has used (Linux: its task's utime + stime, in clock ticks of 10 ms). */
function mainThreadCpuMs(): number {
  const fields = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Runs `work` and measures the main thread's CPU and the whole process's CPU per callback. */
async function measure(what: string, work: () => Promise<void>): Promise<Row> {
  const main = mainThreadCpuMs();
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu);
  return { what, seconds, mainUs: ((mainThreadCpuMs() - main) * 1000) / total, processUs: (used.user + used.system) / total };
}

const until = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
};

/** Baseline: the delivery pool alone, 256 in flight as the dispatcher's lane allows. */
async function poolAlone(): Promise<Row> {
  const pool = await startCallbackDeliveryPool(threads, log);
  try {
    return await measure('baseline: the delivery pool alone', async () => {
      let next = 0;
      let inFlight = 0;
      await new Promise<void>((resolve, reject) => {
        const more = (): void => {
          while (inFlight < 256 && next < total) {
            const i = next++;
            inFlight++;
            pool.deliver({ url, secret: 'tēnā koe', eventId: randomUUID(), body: JSON.stringify(body(i)), timeoutMs: 10_000, allowPrivate: true }).then(() => {
              inFlight--;
              if (next === total && inFlight === 0) resolve();
              else more();
            }, reject);
          }
        };
        more();
      });
    });
  } finally {
    await pool.stop();
  }
}

/** The pipeline: jobs owed in batches as the producer makes them, until every one is settled. */
async function pipeline(): Promise<Row> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-callback-pipeline-'));
  const { accounts } = accountsInMemory();
  const app = await accounts.upsert({ name: 'acme', password: 'secret', statusCallbackUrl: url, callbackSecret: 'tēnā koe' });
  const outbox = openCallbackOutbox({ dir, log });
  const dispatcher = await startCallbackDispatcher({
    bus: createMemoryBus(),
    accounts,
    log,
    outbox,
    retryForMs: 86_400_000,
    timeoutMs: 10_000,
    allowPrivate: true,
    threads,
    busKeepsRecords: false,
    ledger: createCallbackLedger(),
  });
  try {
    return await measure('hermod: outbox, queues, dispatcher, delivery pool', async () => {
      // Owed as status batches make them: a batch per turn while the outbox has room for it, five callbacks per message.
      for (let made = 0; made < total; ) {
        if (outbox.size > 20_000) {
          await new Promise((r) => setImmediate(r));
          continue;
        }
        const jobs: CallbackJob[] = [];
        for (let k = 0; k < batch && made < total; k++, made++) {
          jobs.push({
            eventId: randomUUID(),
            applicationId: app.id,
            kind: 'status',
            messageId: `m-${Math.floor(made / 5)}`,
            body: body(made),
            createdAt: Date.now(),
            attempt: 0,
            notBefore: 0,
          });
        }
        outbox.owe(jobs);
        await new Promise((r) => setImmediate(r));
      }
      await until(() => outbox.size === 0);
    });
  } finally {
    await dispatcher.stop();
    outbox.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const rows: Row[] = [];
for (let r = 0; r < rounds; r++) {
  rows.push(await poolAlone());
  rows.push(await pipeline());
}
await receiverThread.terminate();

const mean = (what: string, pick: (r: Row) => number): number => {
  const of = rows.filter((r) => r.what === what).map(pick);
  return of.reduce((a, b) => a + b, 0) / of.length;
};
console.log(
  `${total} callbacks per row, ${threads} delivery threads, jobs owed ${batch} per turn, ${rounds} alternated rounds (${new Date().toISOString()}, load ${os.loadavg()[0]!.toFixed(1)})`,
);
console.log('');
printTable(
  [
    { title: 'row' },
    { title: 'callbacks/s', align: 'right' },
    { title: 'main thread µs / callback', align: 'right' },
    { title: 'process CPU µs / callback', align: 'right' },
  ],
  rows.map((r) => [r.what, Math.round(total / r.seconds).toLocaleString('en'), r.mainUs.toFixed(1), r.processUs.toFixed(1)]),
);
const base = 'baseline: the delivery pool alone';
const ours = 'hermod: outbox, queues, dispatcher, delivery pool';
console.log('');
console.log(
  `the pipeline's own cost on the main thread: ${(mean(ours, (r) => r.mainUs) - mean(base, (r) => r.mainUs)).toFixed(1)} µs per callback (main thread ${mean(ours, (r) => r.mainUs).toFixed(1)} against ${mean(base, (r) => r.mainUs).toFixed(1)})`,
);
