/**
 * Where acceptance time goes (issue 13): hermod started afresh for each
 * interface (v2 `POST /rest/sms/v2/messages`, v1 `POST /rest/gateway/messages`),
 * driven by wrk as bench:peers drives it, with `node --cpu-prof` in every
 * process of the service; then self time by function per process (gateway,
 * core, workers), busiest first. Without profiling (BENCH_PROFILE=0) it is a
 * quick A/B driver: the same runs, figures only.
 *
 *   npx tsx bench/acceptance-profile.ts
 *   BENCH_PROFILE=0 BENCH_ROUNDS=3 npx tsx bench/acceptance-profile.ts
 *
 * Knobs: BENCH_CONNECTIONS (16), BENCH_SECONDS (10), BENCH_WARMUP (2),
 * BENCH_THREADS, HERMOD_GATEWAYS (the service's default: cores − 1), BENCH_INTERFACES (v2,v1),
 * BENCH_ROUNDS (1), BENCH_TOP functions per process (20), BENCH_PROFILE (1),
 * BENCH_SHARED=1 (one service per round, the interfaces one after the other
 * once the previous one's messages reached the SMSC, as bench:peers runs them),
 * BENCH_KEYED=1 (each request with an Idempotency-Key of its own).
 * Profiles, role map and wrk output stay in the directory it prints.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCpuMeter } from './support/cpu-meter';
import { formatProfiles, profileFiles, summariseProfile } from './support/cpu-profile-top';
import { formatMs } from './support/format-ms';
import { hermodPid } from './support/hermod-pid';
import { processRoles } from './support/process-roles';
import { runWrk } from './support/run-wrk';
import { startCampaignService } from './support/start-campaign-service';
import { waitForCount } from './support/wait-for-count';
import { defaultGateways } from '../lib/config';
import { metricsText } from './support/metrics-text';

const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmup = Number(process.env.BENCH_WARMUP ?? 2);
const threads = Number(process.env.BENCH_THREADS ?? Math.min(connections, os.availableParallelism()));
const gateways = process.env.HERMOD_GATEWAYS ?? String(defaultGateways());
const interfaces = (process.env.BENCH_INTERFACES ?? 'v2,v1').split(',').filter(Boolean);
const rounds = Number(process.env.BENCH_ROUNDS ?? 1);
const top = Number(process.env.BENCH_TOP ?? 20);
const profile = process.env.BENCH_PROFILE !== '0';
const shared = process.env.BENCH_SHARED === '1';

const TEXT = 'Kia ora, e hoa mā 👋🏽';
const USER = 'bench';
const PASS = 'bench-secret';
const PATHS: Record<string, string> = { v2: '/rest/sms/v2/messages', v1: '/rest/gateway/messages' };

/** Sum of a metric's samples whose labels include every one given, from the supervisor's aggregated /metrics. */
async function metricSum(metricsPort: number, name: string, labels: string[]): Promise<number> {
  const text = await metricsText(`http://127.0.0.1:${metricsPort}/metrics`);
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && labels.every((x) => l.includes(x)))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

type Started = Awaited<ReturnType<typeof startCampaignService>> & {
  profDir: string;
  roles: Record<string, string>;
  submits: () => number;
  /** When the first load began (performance.now()): the profiles are summed from there, not from start-up. */
  loadFrom?: number;
};

async function start(dir: string, name: string): Promise<Started> {
  const profDir = path.join(dir, name);
  fs.mkdirSync(profDir);
  const started = await startCampaignService({
    user: USER,
    pass: PASS,
    receiptDelayMs: 20,
    gateways,
    nodeArgs: profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : undefined,
  });
  if (!started.hermod || !started.simulator) throw new Error('expected hermod started here');
  let submits = 0;
  started.simulator.on('submit', () => void (submits += 1));
  const roles = Object.fromEntries(processRoles(hermodPid() ?? -1).map((r) => [String(r.pid), r.role]));
  fs.writeFileSync(path.join(profDir, 'roles.json'), JSON.stringify(roles, null, 2));
  return { ...started, profDir, roles, submits: () => submits };
}

async function stop(s: Started): Promise<void> {
  await s.hermod!.stop();
  await s.simulator!.stop();
  fs.rmSync(s.hermod!.dataDir, { recursive: true, force: true });
  if (!profile) return;
  const lastS = s.loadFrom === undefined ? undefined : (performance.now() - s.loadFrom) / 1000;
  console.log(`profiles of the last ${lastS?.toFixed(1) ?? 'all'} s of each process (load and stop), in ${s.profDir}`);
  console.log(
    formatProfiles(
      profileFiles([s.profDir]).map((f) => summariseProfile(f, lastS)),
      s.roles,
      top,
    ),
  );
}

/** Warm-up and measured run of one interface; resolves with the 2xx answers of both. */
async function one(dir: string, s: Started, which: string, round: number): Promise<number> {
  const name = `${which}-r${round}`;
  const { service } = s;
  const hermod = s.hermod!;
  const request = {
    url: `${service.url}${PATHS[which]}`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', authorization: service.auth },
    body: JSON.stringify({ destination: '+6421000002', content: TEXT }),
    ...(process.env.BENCH_KEYED === '1' ? { uniqueHeader: 'Idempotency-Key' } : {}),
  };
  const o = { dir, connections, threads };
  s.loadFrom ??= performance.now();
  const warm = warmup > 0 ? await runWrk(request, { ...o, name: `${name}-warmup`, seconds: warmup }) : undefined;
  // Batches from the gateways to core: SendMessageStream batches, or SendMessages calls (before the stream, for A/B against older commits).
  const calls = async (): Promise<number> =>
    (await metricSum(hermod.metricsPort, 'hermod_grpc_call_duration_seconds_count', ['side="client"', 'method="SendMessageStream"'])) +
    (await metricSum(hermod.metricsPort, 'hermod_grpc_call_duration_seconds_count', ['side="client"', 'method="SendMessages"']));
  const callsBefore = await calls();
  const meter = createCpuMeter(hermodPid());
  meter.start();
  const run = await runWrk(request, { ...o, name, seconds });
  // CPU of hermod's processes per answered request: less at the mercy of the other loads on a shared machine than req/s.
  const cpu = meter.stop().filter((r) => r.label.startsWith('hermod '));
  const perRequest = (percent: number): string => (((percent / 100) * seconds * 1000) / Math.max(1, run.requests)).toFixed(2);
  const total = cpu.reduce((n, r) => n + r.percent, 0);
  const perCall = run.requests / Math.max(1, (await calls()) - callsBefore);
  console.log(
    `${which} round ${round}: ${Math.round(run.rps)} req/s, p50 ${formatMs(run.p50)} ms, p99 ${formatMs(run.p99)} ms, non-2xx ${run.non2xx}, socket errors ${run.errors}, load ${os.loadavg()[0]!.toFixed(1)}; ${perCall.toFixed(1)} messages per gateway → core batch; hermod CPU ms/request ${perRequest(total)} (${cpu.map((r) => `${r.label.slice(7)} ${perRequest(r.percent)}`).join(', ')})`,
  );
  return run.requests - run.non2xx + (warm ? warm.requests - warm.non2xx : 0);
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-acceptance-profile-'));
  console.log(
    `acceptance ${profile ? 'profile' : 'A/B'}: ${interfaces.join(', ')} × ${rounds}, wrk -t ${threads} -c ${connections} ${seconds} s (+${warmup} s warm-up), HERMOD_GATEWAYS=${gateways}; output in ${dir}`,
  );
  for (let r = 1; r <= rounds; r += 1) {
    if (!shared) {
      for (const which of interfaces) {
        const s = await start(dir, `${which}-r${r}`);
        try {
          await one(dir, s, which, r);
        } finally {
          await stop(s);
        }
      }
      continue;
    }
    // As bench:peers runs them: one service, one interface after the other, each once what it accepted has reached the SMSC.
    const s = await start(dir, `shared-r${r}`);
    try {
      let accepted = 0;
      for (const which of interfaces) {
        accepted += await one(dir, s, which, r);
        await waitForCount(`${which} → SMSC simulator`, s.submits, accepted, { timeoutS: 120 });
      }
    } finally {
      await stop(s);
    }
  }
}

await main();
