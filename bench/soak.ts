/**
 * Soak (issue 14): do memory and throughput stay flat under a steady load?
 * For each topology — `embedded` (`hermod start`: in-memory bus and state,
 * chDB) and `redis` (HERMOD_BUS=redis, HERMOD_STATE=redis, a fresh key
 * prefix) — starts the service with its SMSC simulator and a fresh data
 * directory, points acme's status callback at a receiver in this process
 * (answers 200 at once), and sends v2 and v1 messages alternately at a
 * constant arrival rate (open model) for BENCH_MINUTES. Every 10 s it samples
 * each hermod process's RSS by role and the service's summed Pss (the node
 * binary and the libraries that every process maps, counted once where summed
 * RSS counts them in each process), the V8 heap used (all processes, from
 * the supervisor's /metrics, summed), core's event-loop delay (p99 and
 * maximum), Redis used_memory (whole server),
 * acceptance latency (POST → 2xx, here) and end-to-end latency (POST → the
 * `received` callback at the receiver), core's V8 heap and chDB's tracked
 * memory. The 1 GB criterion is judged on summed RSS, the stricter figure.
 *
 * It prints the first and last five minutes after BENCH_WARMUP side by side,
 * the least-squares slope of RSS (and Redis memory) over the last 20 minutes
 * (or the whole measured run if shorter), and whether each flatness criterion
 * of the issue is met; writes bench/soak-<topology>.svg and .json. After the
 * run it restarts the service on the same data directory and reports how long
 * that took and whether it replayed any journal.
 *
 *   npm run bench:soak
 *   BENCH_TOPOLOGY=embedded BENCH_MINUTES=3 BENCH_WARMUP=0.5 BENCH_RATE=500 npm run bench:soak
 *
 * A send due while BENCH_CONNECTIONS × 2 are already in flight is counted as
 * skipped, not queued (as in redis-soak.ts). Knobs: BENCH_RATE messages/s
 * (2000), BENCH_MINUTES (30), BENCH_WARMUP minutes (2), BENCH_TOPOLOGY
 * embedded|redis|both (both), BENCH_CONNECTIONS (256), BENCH_HANDSETS distinct
 * destinations cycled through (50,000), BENCH_RECEIPT_DELAY (20ms),
 * HERMOD_GATEWAYS (1), BENCH_OUT directory for the chart and JSON (bench/),
 * REDIS_URL.
 */
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { startHermod, type HermodProcess } from '../test/support/hermod-process';
import { freePort } from '../test/support/free-port';
import { deleteRedisKeys, REDIS_URL } from '../test/support/redis-keys';
import { startCallbackReceiver } from './support/callback-receiver';
import { destination } from './support/destination';
import { formatMs } from './support/format-ms';
import { formatEntries, memoryEntries } from './support/memory-entries';
import { hermodPid } from './support/hermod-pid';
import { paced } from './support/paced';
import { printTable } from './support/print-table';
import { sampleRedis, slopePerMinute } from './support/redis-sample';
import { roleMemory } from './support/role-memory';
import { MB } from './support/rss-sampler';
import { serviceMetrics } from './support/service-metrics';
import { readText, serviceRequest, type Service } from './support/service-request';
import { sleep } from './support/sleep';
import { spread } from './support/spread';
import { svgLineChart, type Series } from './support/svg-line-chart';
import { exitOnSignal } from './support/exit-on-signal';
import { createCpuMeter } from './support/cpu-meter';

exitOnSignal();

const rate = Number(process.env.BENCH_RATE ?? 2000);
const minutes = Number(process.env.BENCH_MINUTES ?? 30);
const warmupMin = Number(process.env.BENCH_WARMUP ?? 2);
const topologyKnob = process.env.BENCH_TOPOLOGY ?? 'both';
const connections = Number(process.env.BENCH_CONNECTIONS ?? 256);
const handsets = Number(process.env.BENCH_HANDSETS ?? 50_000);
const receiptDelay = process.env.BENCH_RECEIPT_DELAY ?? '20ms';
const gateways = process.env.HERMOD_GATEWAYS ?? '1';
const outDir = path.resolve(process.env.BENCH_OUT ?? path.join(import.meta.dirname));
const SAMPLE_MS = 10_000;
const WINDOW_MIN = 5;
const SLOPE_MIN = 20;
/** Flatness (issue 14): last five minutes within 5% of the first five; RSS ≤ 1 GB; slopes ≈ 0 (here: below 1 MB/min). */
const TOLERANCE = 0.05;
const RSS_LIMIT = 1024 * MB;
const FLAT_SLOPE = 1 * MB;

type Topology = 'embedded' | 'redis';

interface Sample {
  /** Minutes since the load started. */
  t: number;
  rss: number;
  /** Summed Pss: the node binary and libraries that every process maps counted once. */
  pss: number;
  rssByRole: Record<string, number>;
  heapUsed: number;
  /** Core's own V8 heap, and the memory chDB tracks inside core (NaN if not reported). */
  coreHeap: number;
  coreHeapCommitted: number;
  engineMemory: number;
  loopP99: number;
  loopMax: number;
  /** Redis used_memory (whole server); NaN on the embedded topology. */
  redisUsed: number;
  /** CPU in the 10 s before, % of one core: per hermod role, `bench` (this process), `redis` (the whole server), `machine`. */
  cpu: Record<string, number>;
  /** 2xx answers in the 10 s before, per second. */
  acceptedPerS: number;
  acceptP99: number;
  /** `received` callbacks in the 10 s before, per second, and their POST → callback p99. */
  receivedPerS: number;
  e2eP99: number;
  sent: number;
  failed: number;
  skipped: number;
  inFlight: number;
}

/** A CPU meter's rows as role → % of one core (`bench` for this process, `machine` for the whole machine). */
function cpuOfRoles(rows: readonly { label: string; percent: number }[]): Record<string, number> {
  const cpu: Record<string, number> = {};
  for (const { label, percent } of rows) {
    if (label.startsWith('hermod ')) cpu[label.slice('hermod '.length)] = percent;
    else if (label.startsWith('this bench process')) cpu.bench = percent;
    else if (label.startsWith('machine total')) cpu.machine = percent;
  }
  return cpu;
}

async function soak(topology: Topology): Promise<{ met: boolean; lines: string[] }> {
  const prefix = `hermod-soak-${randomUUID().slice(0, 8)}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `hermod-soak-${topology}-`));
  const pending = new Map<string, number>();
  let windowAccept: number[] = [];
  let windowE2e: number[] = [];
  const receiver = await startCallbackReceiver((urlPath, body, at) => {
    if (urlPath !== '/status' || !body.includes('"received"')) return;
    const reference = /"reference":"(s-\d+)"/.exec(body)?.[1];
    const sentAt = reference === undefined ? undefined : pending.get(reference);
    if (sentAt === undefined || !/"status":"received"/.test(body)) return;
    pending.delete(reference!);
    windowE2e.push(at - sentAt);
  });
  const env: Record<string, string> = {
    HERMOD_SMSC_PORT: String(await freePort()),
    HERMOD_SMSC_RECEIPT_DELAY: receiptDelay,
    HERMOD_CALLBACK_ALLOW_PRIVATE: 'true',
    HERMOD_GATEWAYS: gateways,
    ...(topology === 'redis' ? { HERMOD_BUS: 'redis', HERMOD_STATE: 'redis', HERMOD_REDIS_URL: REDIS_URL, HERMOD_REDIS_PREFIX: prefix } : {}),
  };
  let hermod: HermodProcess | undefined = await startHermod({ dataDir, env, nodeArgs: process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) });
  const agent = new https.Agent({ keepAlive: true, maxSockets: connections, ca: hermod.ca() });
  const service: Service = { url: hermod.baseUrl, auth: 'Basic ' + Buffer.from('acme:secret').toString('base64'), app: 'acme', agent };
  const samples: Sample[] = [];
  const lines: string[] = [];
  try {
    const set = await hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `http://127.0.0.1:${receiver.port}/status`]);
    if (set.code !== 0) throw new Error(`hermod apps set-callbacks answered ${set.code}: ${set.output}`);
    const root = hermodPid();
    if (root === undefined) throw new Error('cannot find the hermod process');
    const metricsUrl = `http://127.0.0.1:${hermod.metricsPort}/metrics`;
    let sent = 0;
    let accepted = 0;
    let failed = 0;
    let skipped = 0;
    let inFlight = 0;
    let lastSampleAt = performance.now();
    let lastAccepted = 0;
    let cpuMeter = createCpuMeter(root);
    cpuMeter.start();
    let lastRedisCpu = Number.NaN;
    const started = performance.now();
    const sample = async (): Promise<void> => {
      const now = performance.now();
      const seconds = (now - lastSampleAt) / 1000;
      lastSampleAt = now;
      const acc = windowAccept;
      const e2e = windowE2e;
      windowAccept = [];
      windowE2e = [];
      // Sends with no callback after a minute are lost to this count; forget them so this process stays flat too.
      for (const [ref, at] of pending) {
        if (now - at < 60_000) break;
        pending.delete(ref);
      }
      const mem = roleMemory(root);
      const m = await serviceMetrics(metricsUrl, {
        heap: 'hermod_nodejs_heap_size_used_bytes',
        // Core's event loop: the one that carries acceptance, status tracking and callbacks.
        p99: 'hermod_nodejs_eventloop_lag_p99_seconds{process="core"}',
        max: 'hermod_nodejs_eventloop_lag_max_seconds{process="core"}',
        coreHeap: 'hermod_role_heap_used_bytes{role="core"}',
        coreHeapCommitted: 'hermod_role_heap_committed_bytes{role="core"}',
        engine: 'hermod_history_engine_memory_bytes',
      }).catch(() => ({ heap: Number.NaN, p99: Number.NaN, max: Number.NaN, coreHeap: Number.NaN, coreHeapCommitted: Number.NaN, engine: Number.NaN }));
      const held = await memoryEntries(metricsUrl).catch(() => ({}));
      const redis = topology === 'redis' ? await sampleRedis(REDIS_URL, prefix) : undefined;
      const redisUsed = redis?.usedMemory ?? Number.NaN;
      const cpu = cpuOfRoles(cpuMeter.stop());
      cpuMeter = createCpuMeter(root);
      cpuMeter.start();
      if (redis) {
        cpu.redis = (100 * (redis.cpuSeconds - lastRedisCpu)) / seconds;
        lastRedisCpu = redis.cpuSeconds;
      }
      const s: Sample = {
        t: (now - started) / 60_000,
        rss: mem.total,
        pss: mem.pss,
        rssByRole: mem.byRole,
        heapUsed: m.heap,
        coreHeap: m.coreHeap,
        coreHeapCommitted: m.coreHeapCommitted,
        engineMemory: m.engine,
        loopP99: m.p99 * 1000,
        loopMax: m.max * 1000,
        redisUsed,
        cpu,
        acceptedPerS: (accepted - lastAccepted) / seconds,
        acceptP99: spread(acc).p99,
        receivedPerS: e2e.length / seconds,
        e2eP99: spread(e2e).p99,
        sent,
        failed,
        skipped,
        inFlight,
      };
      lastAccepted = accepted;
      samples.push(s);
      console.log(
        `  ${topology} ${s.t.toFixed(1)} min: RSS ${mb(s.rss)} MB (Pss ${mb(s.pss)}; core ${mb(s.rssByRole.core ?? 0)}: heap ${mb(s.coreHeap)} of ${mb(s.coreHeapCommitted)}, chDB ${mb(s.engineMemory)}), heap ${mb(s.heapUsed)} MB, ` +
          `${topology === 'redis' ? `Redis ${mb(s.redisUsed)} MB, ` : ''}accepted ${Math.round(s.acceptedPerS)}/s p99 ${formatMs(s.acceptP99)} ms, ` +
          `received ${Math.round(s.receivedPerS)}/s e2e p99 ${formatMs(s.e2eP99)} ms, loop p99 ${formatMs(s.loopP99)} ms, CPU core ${Math.round(s.cpu.core ?? 0)} % machine ${Math.round(s.cpu.machine ?? 0)} %; ${failed} failed, ${skipped} skipped, ${inFlight} in flight`,
      );
      // What core holds, by structure (issue 14: each follows what is in flight, or says what grows).
      console.log(`    held: ${formatEntries(held) || '–'}`);
    };
    console.log(`\n${topology}: ${rate}/s (v2 and v1 alternately) for ${minutes} min, warm-up ${warmupMin} min, ${handsets} handsets; data ${dataDir}`);
    let sampling = Promise.resolve();
    const timer = setInterval(() => (sampling = sampling.then(sample, (err) => console.error(err))), SAMPLE_MS);
    const run = await paced(rate, minutes * 60, (i) => {
      if (inFlight >= connections * 2) return void (skipped += 1);
      sent += 1;
      inFlight += 1;
      const reference = `s-${i}`;
      const v1 = i % 2 === 1;
      const body = JSON.stringify({ destination: destination(i % handsets), content: `Kia ora ${i}, e hoa mā — tēnā koe 👋🏽 你好`, reference });
      const t0 = performance.now();
      serviceRequest(service, 'POST', v1 ? '/rest/gateway/messages' : '/rest/sms/v2/messages', Readable.from([body]))
        .then(
          async (res) => {
            await readText(res);
            if (res.statusCode === (v1 ? 201 : 202)) {
              accepted += 1;
              windowAccept.push(performance.now() - t0);
              pending.set(reference, t0);
            } else failed += 1;
          },
          () => void (failed += 1),
        )
        .finally(() => (inFlight -= 1));
    });
    clearInterval(timer);
    await sampling;
    const figures = report(topology, samples, { sent, accepted, failed, skipped, seconds: run.seconds });
    lines.push(...figures.lines);

    // Done when: restarting after the soak replays nothing already flushed, and starts within 10 s.
    agent.destroy();
    await hermod.stop();
    const t0 = performance.now();
    hermod = await startHermod({ dataDir, env });
    const startS = (performance.now() - t0) / 1000;
    const replayed = /"msg":"replayed journaled history writes"[^\n]*"rows":(\d+)/.exec(hermod.output())?.[1] ?? '0';
    const journal = fs.readdirSync(path.join(dataDir, 'journal'));
    const restart = `restart on the same data directory: running after ${startS.toFixed(1)} s (target ≤ 10 s: ${startS <= 10 ? 'met' : 'not met'}), replayed ${replayed} journaled rows; journal files: ${journal.join(', ')}`;
    console.log(restart);
    lines.push(restart);
    writeResults(topology, samples, figures.lines);
    return { met: figures.met && startS <= 10, lines };
  } finally {
    agent.destroy();
    await hermod?.stop();
    receiver.close();
    if (topology === 'redis') await deleteRedisKeys(prefix);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const mb = (b: number): string => (b / MB).toFixed(0);
const mean = (xs: number[]): number => xs.reduce((a, x) => a + x, 0) / xs.length;
const median = (xs: number[]): number => {
  const v = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return v.length === 0 ? Number.NaN : v[Math.floor(v.length / 2)]!;
};

function report(
  topology: Topology,
  samples: Sample[],
  run: { sent: number; accepted: number; failed: number; skipped: number; seconds: number },
): { met: boolean; lines: string[] } {
  const measured = samples.filter((s) => s.t >= warmupMin);
  const end = measured.at(-1)?.t ?? 0;
  const first = measured.filter((s) => s.t < warmupMin + WINDOW_MIN);
  const last = measured.filter((s) => s.t > end - WINDOW_MIN);
  const slopeSpan = measured.filter((s) => s.t > end - SLOPE_MIN);
  const lines = [
    `${topology}: asked ${rate}/s for ${(run.seconds / 60).toFixed(1)} min; ${run.sent} sent, ${run.accepted} accepted (${Math.round(run.accepted / run.seconds)}/s), ${run.failed} failed, ${run.skipped} skipped; ` +
      `${os.availableParallelism()} cores, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}, node ${process.version}, HERMOD_GATEWAYS=${gateways}`,
    `first window: ${first[0]?.t.toFixed(1)}–${first.at(-1)?.t.toFixed(1)} min, last window: ${last[0]?.t.toFixed(1)}–${last.at(-1)?.t.toFixed(1)} min (medians of 10 s samples; RSS the mean); slope over ${slopeSpan[0]?.t.toFixed(1)}–${end.toFixed(1)} min`,
  ];
  for (const l of lines) console.log(l);
  const roles = [...new Set(samples.flatMap((s) => Object.keys(s.rssByRole)))].sort();
  const cpuKeys = [...new Set(samples.flatMap((s) => Object.keys(s.cpu ?? {})))].sort((a, b) =>
    a === 'machine' ? 1 : b === 'machine' ? -1 : a.localeCompare(b),
  );
  const row = (what: string, value: (s: Sample) => number, fmt: (n: number) => string, avg = median): (string | number)[] => {
    const a = avg(first.map(value));
    const b = avg(last.map(value));
    return [
      what,
      fmt(a),
      fmt(b),
      Number.isFinite(a) && a !== 0 ? `${(((b - a) / a) * 100).toFixed(1)}%` : '',
      fmt(
        slopePerMinute(
          slopeSpan.map((s) => ({ at: s.t * 60_000, v: value(s) })),
          (s) => s.v,
        ),
      ),
    ];
  };
  const n0 = (n: number): string => (Number.isFinite(n) ? n.toFixed(0) : '–');
  const n1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '–');
  const rows = [
    row('accepted, /s', (s) => s.acceptedPerS, n0),
    row('acceptance p99, ms', (s) => s.acceptP99, n1),
    row('`received` callbacks, /s', (s) => s.receivedPerS, n0),
    row('end-to-end p99 (POST → received callback), ms', (s) => s.e2eP99, n1),
    row('RSS, whole service, MB', (s) => s.rss / MB, n0, mean),
    row('Pss, whole service (shared pages once), MB', (s) => s.pss / MB, n0, mean),
    ...roles.map((r) => row(`RSS, ${r}, MB`, (s) => (s.rssByRole[r] ?? 0) / MB, n0, mean)),
    row('V8 heap used, all processes, MB', (s) => s.heapUsed / MB, n0, mean),
    row('V8 heap used, core, MB', (s) => s.coreHeap / MB, n0, mean),
    row('V8 heap committed, core, MB', (s) => s.coreHeapCommitted / MB, n0, mean),
    row('chDB tracked memory (MemoryTracking, in core), MB', (s) => s.engineMemory / MB, n0, mean),
    row("core's event-loop delay p99, ms", (s) => s.loopP99, n1),
    row("core's event-loop delay max, ms", (s) => s.loopMax, n1),
    ...(topology === 'redis' ? [row('Redis used_memory (whole server), MB', (s) => s.redisUsed / MB, n1, mean)] : []),
    ...cpuKeys.map((k) => row(`CPU, ${k}, % of one core`, (s) => s.cpu?.[k] ?? Number.NaN, n0, mean)),
  ];
  console.log();
  printTable(
    [
      { title: `${topology}: figure` },
      ...['first 5 min', 'last 5 min', 'change', `slope/min, last ${SLOPE_MIN} min`].map((title) => ({ title, align: 'right' as const })),
    ],
    rows,
  );
  const within = (value: (s: Sample) => number, higherIsWorse: boolean): boolean => {
    const a = median(first.map(value));
    const b = median(last.map(value));
    return higherIsWorse ? b <= a * (1 + TOLERANCE) : b >= a * (1 - TOLERANCE);
  };
  const slope = (value: (s: Sample) => number): number =>
    slopePerMinute(
      slopeSpan.map((s) => ({ at: s.t * 60_000, v: value(s) })),
      (s) => s.v,
    );
  const rssMax = Math.max(...measured.map((s) => s.rss));
  const criteria: [string, boolean][] = [
    ['throughput (accepted/s) in the last 5 min within 5% of the first 5', within((s) => s.acceptedPerS, false)],
    ['acceptance p99 in the last 5 min within 5% of the first 5', within((s) => s.acceptP99, true)],
    ['end-to-end p99 in the last 5 min within 5% of the first 5', within((s) => s.e2eP99, true)],
    [`RSS of the whole service after warm-up ≤ 1 GB (largest sample ${mb(rssMax)} MB)`, rssMax <= RSS_LIMIT],
    [`RSS not rising: slope ${mb(slope((s) => s.rss))} MB/min over the last ${SLOPE_MIN} min, below 1 MB/min`, slope((s) => s.rss) < FLAT_SLOPE],
    ...(topology === 'redis'
      ? ([[`Redis memory not rising: slope ${(slope((s) => s.redisUsed) / MB).toFixed(2)} MB/min, below 1 MB/min`, slope((s) => s.redisUsed) < FLAT_SLOPE]] as [
          string,
          boolean,
        ][])
      : []),
  ];
  // The last sample falls up to one sampling interval before the end.
  if (end - warmupMin < 2 * WINDOW_MIN - SAMPLE_MS / 60_000)
    criteria.push([
      `the run measured ${(end - warmupMin).toFixed(1)} min after warm-up: the windows overlap (BENCH_MINUTES below ${warmupMin + 2 * WINDOW_MIN})`,
      false,
    ]);
  console.log();
  for (const [what, ok] of criteria) {
    const line = `${ok ? 'met    ' : 'NOT met'}  ${what}`;
    console.log(line);
    lines.push(line);
  }
  return { met: criteria.every(([, ok]) => ok), lines };
}

function writeResults(topology: Topology, samples: Sample[], lines: string[]): void {
  const svgFile = path.join(outDir, `soak-${topology}.svg`);
  const jsonFile = path.join(outDir, `soak-${topology}.json`);
  const line = (name: string, value: (s: Sample) => number): Series => ({ name, points: samples.map((s) => [s.t, value(s)] as const) });
  const roles = [...new Set(samples.flatMap((s) => Object.keys(s.rssByRole)))].filter((r) => !r.includes('(')).sort();
  const markers = [[warmupMin, 'warm-up ends'] as const];
  const svg = svgLineChart(`hermod soak, ${topology}: ${rate}/s offered, v2 + v1 with callbacks`, 'minutes since the load started', [
    {
      title: 'Memory',
      unit: 'MB',
      markers,
      series: [
        line('RSS, whole service', (s) => s.rss / MB),
        line('Pss, whole service', (s) => s.pss / MB),
        ...roles.map((r) => line(`RSS, ${r}`, (s) => (s.rssByRole[r] ?? 0) / MB)),
        line('V8 heap used, all', (s) => s.heapUsed / MB),
        line('V8 heap used, core', (s) => s.coreHeap / MB),
        line('V8 heap committed, core', (s) => s.coreHeapCommitted / MB),
        line('chDB tracked memory', (s) => s.engineMemory / MB),
        ...(topology === 'redis' ? [line('Redis used_memory', (s) => s.redisUsed / MB)] : []),
      ],
    },
    { title: 'Throughput', unit: 'per second', markers, series: [line('accepted', (s) => s.acceptedPerS), line('received callbacks', (s) => s.receivedPerS)] },
    {
      title: 'Latency, p99 per 10 s',
      unit: 'ms',
      markers,
      series: [line('acceptance', (s) => s.acceptP99), line('end-to-end (POST → received)', (s) => s.e2eP99), line('event-loop delay p99', (s) => s.loopP99)],
    },
  ]);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(svgFile, svg);
  fs.writeFileSync(jsonFile, JSON.stringify({ topology, rate, minutes, warmup: warmupMin, handsets, gateways, figures: lines, samples }, null, 2) + '\n');
  console.log(`chart ${path.relative(process.cwd(), svgFile)}, samples ${path.relative(process.cwd(), jsonFile)}`);
}

async function main(): Promise<void> {
  const topologies: Topology[] = topologyKnob === 'both' ? ['embedded', 'redis'] : [topologyKnob as Topology];
  if (!topologies.every((t) => t === 'embedded' || t === 'redis')) throw new Error(`BENCH_TOPOLOGY must be embedded, redis or both, got ${topologyKnob}`);
  const results: { topology: Topology; met: boolean; lines: string[] }[] = [];
  for (const [i, topology] of topologies.entries()) {
    if (i > 0) await sleep(5000);
    results.push({ topology, ...(await soak(topology)) });
  }
  console.log('\nsummary');
  for (const r of results) {
    console.log(`\n${r.topology}: ${r.met ? 'flat: every criterion met' : 'not every criterion met'}`);
    for (const l of r.lines) console.log(`  ${l}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
