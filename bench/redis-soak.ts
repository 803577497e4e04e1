/**
 * Redis soak: does Redis memory stay flat under a steady load on the Redis
 * topology? Starts `hermod start` with HERMOD_BUS=redis, HERMOD_STATE=redis
 * (its own SMSC simulator, a fresh key prefix and data directory), samples
 * Redis while idle for BENCH_IDLE seconds (the baseline), then sends v2
 * messages at BENCH_RATE/s (paced, open model) for BENCH_MINUTES, sampling
 * every 10 s: Redis `used_memory` (the whole server: other users' keys count
 * too), and the entries (XLEN) and MEMORY USAGE of hermod's streams. Prints
 * the first and last load samples, the slope per minute (least squares over
 * the load samples) and the idle baseline.
 *
 *   npm run bench:redis-soak
 *   BENCH_MINUTES=2 BENCH_RATE=500 npm run bench:redis-soak
 *
 * A send due while BENCH_CONNECTIONS × 2 are already in flight is counted as
 * skipped, not queued: a service slower than the asked rate would otherwise
 * fill this process with waiting requests. The report gives the rate reached.
 *
 * Knobs: BENCH_MINUTES (10), BENCH_RATE messages/s (1000), BENCH_IDLE seconds
 * (30), BENCH_CONNECTIONS keep-alive sockets (128), HERMOD_GATEWAYS (1),
 * REDIS_URL (redis://127.0.0.1:6379). Keys under the prefix are deleted at the end.
 *
 * What "flat" can mean: hot state keeps per-message keys until
 * HERMOD_STATE_FINAL_TTL after the final status (BENCH_STATE_FINAL_TTL, 1m
 * here so the plateau is reached within the run; the service default is 10m,
 * whose plateau is ten times higher and reached after ten minutes), and
 * per-handset keys (the last message to each handset, for reply routing) for
 * 7 days, so they are bounded by the handsets messaged, not by the messages:
 * BENCH_HANDSETS (50,000) distinct destinations are cycled through.
 */
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { startHermod } from '../test/support/hermod-process';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from '../test/support/redis-keys';
import { destination } from './support/destination';
import { paced } from './support/paced';
import { printTable } from './support/print-table';
import { readText, serviceRequest, type Service } from './support/service-request';
import { sampleRedis, slopePerMinute, type RedisSample } from './support/redis-sample';
import { sleep } from './support/sleep';

const minutes = Number(process.env.BENCH_MINUTES ?? 10);
const rate = Number(process.env.BENCH_RATE ?? 1000);
const idleS = Number(process.env.BENCH_IDLE ?? 30);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 128);
const gateways = process.env.HERMOD_GATEWAYS ?? '1';
const handsets = Number(process.env.BENCH_HANDSETS ?? 50_000);
const finalTtl = process.env.BENCH_STATE_FINAL_TTL ?? '1m';
const SAMPLE_MS = 10_000;
const MB = 1024 * 1024;

async function main(): Promise<void> {
  const prefix = randomPrefix('soak');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-soak-'));
  const hermod = await startHermod({
    dataDir,
    // e.g. BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof': every process of the service inherits them.
    nodeArgs: process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean),
    env: {
      HERMOD_BUS: 'redis',
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_URL: REDIS_URL,
      HERMOD_REDIS_PREFIX: prefix,
      HERMOD_BOOTSTRAP_APP: 'soak',
      HERMOD_BOOTSTRAP_PASSWORD: 'soak-secret',
      HERMOD_GATEWAYS: gateways,
      HERMOD_SMSC_RECEIPT_DELAY: '20ms',
      HERMOD_STATE_FINAL_TTL: finalTtl,
    },
  });
  const service: Service = {
    url: hermod.baseUrl,
    auth: 'Basic ' + Buffer.from('soak:soak-secret').toString('base64'),
    app: 'soak',
    agent: new https.Agent({ keepAlive: true, maxSockets: connections, ca: hermod.ca() }),
  };
  const samples: (RedisSample & { phase: 'idle' | 'load'; sent: number })[] = [];
  let sent = 0;
  let accepted = 0;
  let failed = 0;
  let skipped = 0;
  let inFlight = 0;
  const sample = async (phase: 'idle' | 'load'): Promise<void> => {
    const s = { ...(await sampleRedis(REDIS_URL, prefix)), phase, sent: accepted };
    samples.push(s);
    console.log(
      `  ${phase} t=${Math.round(s.at / 1000)}s used_memory ${(s.usedMemory / MB).toFixed(1)} MB, streams ${s.entries} entries in ${(s.streamBytes / MB).toFixed(1)} MB, ${accepted} accepted, ${failed} failed, ${skipped} skipped; ${busiest(s.byTopic)}`,
    );
  };
  try {
    console.log(`idle ${idleS}s (baseline), then ${rate}/s for ${minutes} min to ${handsets} handsets, HERMOD_STATE_FINAL_TTL=${finalTtl}; prefix ${prefix}`);
    for (let t = 0; t < idleS * 1000; t += SAMPLE_MS) {
      await sample('idle');
      await sleep(SAMPLE_MS);
    }
    let sampling = Promise.resolve();
    const timer = setInterval(() => (sampling = sampling.then(() => sample('load'))), SAMPLE_MS);
    await sample('load');
    const run = await paced(rate, minutes * 60, (i) => {
      if (inFlight >= connections * 2) return void (skipped += 1);
      sent += 1;
      inFlight += 1;
      const body = JSON.stringify({ destination: destination(i % handsets), content: `Kia ora ${i} — tēnā koe 👋🏽` });
      serviceRequest(service, 'POST', '/rest/sms/v2/messages', Readable.from([body]))
        .then(
          async (res) => {
            await readText(res);
            if (res.statusCode === 202) accepted += 1;
            else failed += 1;
          },
          () => void (failed += 1),
        )
        .finally(() => (inFlight -= 1));
    });
    clearInterval(timer);
    await sampling;
    await sample('load');
    report(samples, { sent, accepted, failed, skipped, seconds: run.seconds });
  } finally {
    service.agent.destroy();
    await hermod.stop();
    await deleteRedisKeys(prefix);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The three topics holding the most entries, e.g. `hermod.sms.v1 1200, hermod.status.v1 800, …`. */
function busiest(byTopic: Record<string, number>): string {
  return Object.entries(byTopic)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 3)
    .map(([topic, n]) => `${topic} ${n}`)
    .join(', ');
}

function report(samples: (RedisSample & { phase: string })[], run: { sent: number; accepted: number; failed: number; skipped: number; seconds: number }): void {
  const idle = samples.filter((s) => s.phase === 'idle');
  const load = samples.filter((s) => s.phase === 'load');
  const base = idle.at(-1) ?? load[0]!;
  const [first, last] = [load[0]!, load.at(-1)!];
  console.log(
    `\nRedis soak: asked ${rate}/s for ${run.seconds.toFixed(0)} s; ${run.sent} sent, ${run.accepted} answered 202 (${Math.round(run.accepted / run.seconds)}/s), ` +
      `${run.failed} failed, ${run.skipped} skipped (${connections * 2} already in flight); ${os.availableParallelism()} cores, node ${process.version}\n`,
  );
  const mb = (b: number): string => (b / MB).toFixed(1);
  // The second half leaves out the ramp-up while the streams fill to their steady length.
  const slopes = (value: (s: RedisSample) => number): number[] => [slopePerMinute(load, value), slopePerMinute(load.slice(Math.floor(load.length / 2)), value)];
  printTable(
    [
      { title: 'figure' },
      ...['idle baseline', 'first load sample', 'last load sample', 'slope/min, whole load', 'slope/min, second half'].map((title) => ({
        title,
        align: 'right' as const,
      })),
    ],
    [
      ['Redis used_memory, MB (whole server)', mb(base.usedMemory), mb(first.usedMemory), mb(last.usedMemory), ...slopes((s) => s.usedMemory).map(mb)],
      ["hermod's streams, entries (total XLEN)", base.entries, first.entries, last.entries, ...slopes((s) => s.entries).map(Math.round)],
      ["hermod's streams, MB (MEMORY USAGE)", mb(base.streamBytes), mb(first.streamBytes), mb(last.streamBytes), ...slopes((s) => s.streamBytes).map(mb)],
      ["hermod's streams, count", base.streams, first.streams, last.streams, '', ''],
    ],
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
