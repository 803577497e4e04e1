/**
 * hermod against Kannel in one run (issue 13). Finds or installs Debian's
 * kannel, kannel-extras and wrk; starts bearerbox, smsbox and fakesmsc on free
 * ports with a generated config; then drives, with the same wrk, the same
 * connections and the same duration, one after the other:
 *   - Kannel `GET /cgi-bin/sendsms` (UTF-8 text sent as UCS-2),
 *   - hermod v2 `POST /rest/sms/v2/messages` and v1 `POST /rest/gateway/messages`
 *     (`hermod start` with a fresh data directory, its SMSC simulator in this process),
 *   - a bare node:https server with hermod's certificate answering hermod's 202
 *     body (the ceiling for TLS in Node here).
 * It prints requests/s, p50, p99 and the ratio to Kannel, checks that every
 * accepted message reached its SMSC (fakesmsc's own count; submit_sm at
 * hermod's simulator, per destination), and appends the figures, the command
 * and the machine's notes to bench/RESULTS.md. Exits non-zero when the peers
 * cannot be installed or a message accepted did not reach its SMSC.
 *
 * End-to-end pace: during every measured run it samples, once a second, what
 * the system has accepted and what reached its SMSC (Kannel's status page;
 * hermod's accepted counter on /metrics and submit_sm at the simulator), and
 * prints whether the backlog between them grew (bench/support/pace.ts). Then
 * hermod v2 runs once more for BENCH_PACE_SECONDS (60), the target's
 * "submits to the SMSC simulator during a 60 s acceptance run".
 *
 *   npm run bench:peers
 *   BENCH_CONNECTIONS=64 BENCH_SECONDS=30 BENCH_NOTE="quiet machine" npm run bench:peers
 *
 * Knobs: BENCH_CONNECTIONS (16), BENCH_SECONDS (10), BENCH_WARMUP seconds
 * before each measured run, same driver, counted as accepted but not measured
 * (2), BENCH_THREADS of wrk (cores, at most the connections), BENCH_DRAIN
 * seconds to wait for the SMSCs to receive what was accepted (120),
 * BENCH_RECEIPT_DELAY_MS of hermod's simulator (20), HERMOD_GATEWAYS (the
 * service's default: cores − 1, at least 1), BENCH_NOTE (a note on the machine for RESULTS.md),
 * BENCH_NO_RESULTS=1 (print only, do not append to RESULTS.md), BENCH_PACE_SECONDS
 * of the end-to-end run (60; 0 leaves it out).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { appendPeersResults } from './support/append-peers-results';
import { debianVersion, ensureDebianPackages } from './support/ensure-debian-packages';
import { formatMs } from './support/format-ms';
import { markdownTable } from './support/markdown-table';
import { paceOf, watchPace, type Pace } from './support/pace';
import { runWrk, type WrkFigures, type WrkRequest } from './support/run-wrk';
import { serviceMetrics } from './support/service-metrics';
import { sleep } from './support/sleep';
import { startBaselineServer } from './support/start-baseline-server';
import { startCampaignService } from './support/start-campaign-service';
import { startKannel } from './support/start-kannel';
import { waitForCount } from './support/wait-for-count';
import { defaultGateways } from '../lib/config';

const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmup = Number(process.env.BENCH_WARMUP ?? 2);
const threads = Number(process.env.BENCH_THREADS ?? Math.min(connections, os.availableParallelism()));
const drainS = Number(process.env.BENCH_DRAIN ?? 120);
const receiptDelayMs = Number(process.env.BENCH_RECEIPT_DELAY_MS ?? 20);
const paceSeconds = Number(process.env.BENCH_PACE_SECONDS ?? 60);
const gateways = process.env.HERMOD_GATEWAYS ?? String(defaultGateways());
const RESULTS = path.join(import.meta.dirname, 'RESULTS.md');

/** World text: te reo Māori with a macron and an emoji with a skin tone (UCS-2, one SMS part). */
const TEXT = 'Kia ora, e hoa mā 👋🏽';
const USER = 'bench';
const PASS = 'bench-secret';
/** One destination per system under test, so hermod's simulator can tell v2's submits from v1's. */
const TO = { kannel: '+6421000001', v2: '+6421000002', v1: '+6421000003', pace: '+6421000004' };

interface Row {
  system: string;
  figures: WrkFigures;
  /** 2xx answers of warm-up and measured run; undefined where there is no SMSC behind. */
  accepted?: number;
  reached?: number;
  note?: string;
  /** Accepted against reached the SMSC, sampled through the measured run. */
  pace?: Pace;
}

/** What a system has accepted so far and how much of it reached its SMSC. */
type Progress = () => Promise<{ accepted: number; reached: number }>;

const accepted = (...runs: (WrkFigures | undefined)[]): number => runs.reduce((n, r) => n + (r ? r.requests - r.non2xx : 0), 0);

/** The warm-up (not measured) and the measured run, same driver and connections; `progress` is sampled through the measured run. */
async function drive(
  dir: string,
  name: string,
  request: WrkRequest,
  progress?: Progress,
  runSeconds = seconds,
): Promise<{ warm?: WrkFigures; run: WrkFigures; pace?: Pace }> {
  const o = { dir, connections, threads };
  console.log(`${name}: ${warmup > 0 ? `${warmup} s warm-up, then ` : ''}${runSeconds} s, wrk -t ${threads} -c ${connections}`);
  const warm = warmup > 0 ? await runWrk(request, { ...o, name: `${name}-warmup`, seconds: warmup }) : undefined;
  const watch = progress && watchPace(progress);
  const run = await runWrk(request, { ...o, name, seconds: runSeconds });
  const pace = watch && paceOf(await watch.stop());
  console.log(`  ${Math.round(run.rps)} req/s, p50 ${formatMs(run.p50)} ms, p99 ${formatMs(run.p99)} ms, non-2xx ${run.non2xx}, socket errors ${run.errors}`);
  if (pace) console.log(`  ${describePace(pace)}`);
  return { warm, run, pace };
}

function describePace(p: Pace): string {
  return `${Math.round(p.acceptedPerS)} accepted/s, ${Math.round(p.reachedPerS)} at the SMSC/s; backlog ${p.backlogStart} → ${p.backlogEnd}, ${Math.round(p.growthPerS)}/s: ${p.keptPace ? 'kept pace' : 'fell behind'}`;
}

async function measureKannel(dir: string): Promise<Row> {
  const kannel = await startKannel({ dir, user: USER, password: PASS });
  try {
    const progress: Progress = async () => {
      const s = await kannel.status();
      return { accepted: s.sent + s.queued + s.waiting, reached: s.sent };
    };
    const { warm, run, pace } = await drive(dir, 'kannel-sendsms', { url: kannel.sendsmsUrl(TO.kannel, TEXT) }, progress);
    const n = accepted(warm, run);
    const drained = await waitForCount('Kannel → fakesmsc', async () => (await kannel.status()).sent, n, { timeoutS: drainS });
    // bearerbox counts a message sent once it is written to the link: give fakesmsc a moment to read its socket before it stops.
    await sleep(1000);
    const reached = await kannel.stopFakesmsc();
    return {
      system: 'Kannel sendsms (bearerbox + smsbox + fakesmsc)',
      figures: run,
      accepted: n,
      reached,
      pace,
      note: drained.done ? undefined : `bearerbox had sent ${drained.count} of ${n} after ${drainS} s`,
    };
  } finally {
    await kannel.stop();
  }
}

async function measureHermod(dir: string): Promise<{ rows: Row[]; cert: string; key: string }> {
  const { service, hermod, simulator } = await startCampaignService({
    user: USER,
    pass: PASS,
    receiptDelayMs,
    gateways,
  });
  if (!hermod || !simulator) throw new Error('expected hermod started here with its simulator');
  const tlsDir = path.join(dir, 'hermod-tls');
  fs.mkdirSync(tlsDir);
  const cert = path.join(tlsDir, 'self-signed.crt');
  const key = path.join(tlsDir, 'self-signed.key');
  fs.copyFileSync(path.join(hermod.dataDir, 'tls/self-signed.crt'), cert);
  fs.copyFileSync(path.join(hermod.dataDir, 'tls/self-signed.key'), key);

  // submit_sm per destination, and the text of the first one (it must arrive as sent).
  const submits = new Map<string, number>();
  const firstText = new Map<string, string>();
  simulator.on('submit', (s) => {
    submits.set(s.destination, (submits.get(s.destination) ?? 0) + 1);
    if (!firstText.has(s.destination)) firstText.set(s.destination, s.text);
  });
  const headers = { 'content-type': 'application/json', authorization: service.auth };
  const metricsUrl = `http://127.0.0.1:${hermod.metricsPort}/metrics`;
  const acceptedSoFar = async (): Promise<number> =>
    (await serviceMetrics(metricsUrl, { accepted: 'hermod_core_messages_total{channel="sms",status="accepted"}' })).accepted || 0;
  const rows: Row[] = [];
  try {
    const runs = [
      ['v2', 'hermod v2 POST /rest/sms/v2/messages', '/rest/sms/v2/messages', seconds],
      ['v1', 'hermod v1 POST /rest/gateway/messages', '/rest/gateway/messages', seconds],
      ...(paceSeconds > 0 ? [['pace', `hermod v2, ${paceSeconds} s end-to-end run`, '/rest/sms/v2/messages', paceSeconds] as const] : []),
    ] as const;
    for (const [which, system, urlPath, runSeconds] of runs) {
      const to = TO[which];
      const body = JSON.stringify({ destination: to, content: TEXT });
      // Each run starts once the one before has all reached the simulator: what is accepted from here on is this run's.
      const before = await acceptedSoFar();
      const progress: Progress = async () => ({ accepted: (await acceptedSoFar()) - before, reached: submits.get(to) ?? 0 });
      const request: WrkRequest = { url: `${service.url}${urlPath}`, method: 'POST', headers, body };
      const { warm, run, pace } = await drive(dir, `hermod-${which}`, request, progress, runSeconds);
      const n = accepted(warm, run);
      const drained = await waitForCount(`hermod ${which} → SMSC simulator`, () => submits.get(to) ?? 0, n, { timeoutS: drainS });
      const text = firstText.get(to);
      const notes = [
        drained.done ? '' : `the simulator had ${drained.count} of ${n} after ${drainS} s`,
        text === undefined || text === TEXT ? '' : `text at the SMSC ${JSON.stringify(text)} is not the text sent`,
      ].filter(Boolean);
      rows.push({ system, figures: run, accepted: n, reached: submits.get(to) ?? 0, pace, note: notes.join('; ') || undefined });
    }
  } finally {
    fs.writeFileSync(path.join(dir, 'hermod-output.log'), hermod.output());
    await hermod.stop();
    await simulator.stop();
    fs.rmSync(hermod.dataDir, { recursive: true, force: true });
  }
  return { rows, cert, key };
}

async function main(): Promise<void> {
  const started = new Date();
  const loadStart = os.loadavg();
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log(
    `bench:peers — ${os.availableParallelism()} cores (${cpu}), load average at start ${loadStart.map((l) => l.toFixed(2)).join(' / ')}, node ${process.version}`,
  );
  try {
    ensureDebianPackages(['kannel', 'kannel-extras', 'wrk']);
  } catch (err) {
    console.error(`bench:peers cannot run: ${(err as Error).message}`);
    process.exit(2);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-peers-'));
  console.log(`config, logs and wrk output in ${dir}\n`);

  const kannel = await measureKannel(dir);
  const hermod = await measureHermod(dir);
  const tls = await startBaselineServer('https', { cert: hermod.cert, key: hermod.key });
  let ceiling: Row;
  try {
    const { run } = await drive(dir, 'node-https-202', {
      url: `${tls.url}/rest/sms/v2/messages`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${USER}:${PASS}`).toString('base64')}` },
      body: JSON.stringify({ destination: TO.v2, content: TEXT }),
    });
    ceiling = { system: 'bare node:https, canned 202 (hermod certificate)', figures: run };
  } finally {
    await tls.stop();
  }
  const loadEnd = os.loadavg();

  const rows = [kannel, ceiling, ...hermod.rows];
  const table = markdownTable(
    [
      { title: 'system' },
      ...['req/s', 'p50 ms', 'p99 ms', '× Kannel', 'non-2xx', 'socket errors', 'accepted', 'reached SMSC', 'shortfall'].map((title) => ({
        title,
        align: 'right' as const,
      })),
    ],
    rows.map((r) => [
      r.system,
      Math.round(r.figures.rps),
      formatMs(r.figures.p50),
      formatMs(r.figures.p99),
      `${(r.figures.rps / kannel.figures.rps).toFixed(2)}×`,
      r.figures.non2xx,
      r.figures.errors,
      r.accepted ?? '–',
      r.reached ?? '–',
      r.accepted === undefined || r.reached === undefined ? '–' : Math.max(0, r.accepted - r.reached),
    ]),
  );
  const paceTable = markdownTable(
    [
      { title: 'system (measured run)' },
      ...['seconds', 'accepted/s', 'at the SMSC/s', 'backlog at start', 'backlog at end', 'backlog growth/s', 'kept pace'].map((title) => ({
        title,
        align: 'right' as const,
      })),
    ],
    rows
      .filter((r) => r.pace)
      .map((r) => {
        const p = r.pace!;
        return [
          r.system,
          Math.round(p.seconds),
          Math.round(p.acceptedPerS),
          Math.round(p.reachedPerS),
          p.backlogStart,
          p.backlogEnd,
          Math.round(p.growthPerS),
          p.keptPace ? 'yes' : 'no',
        ];
      }),
  );
  const lost = rows.filter((r) => r.accepted !== undefined && !(r.reached! >= r.accepted));
  const checks = rows
    .filter((r) => r.accepted !== undefined)
    .map((r) => {
      const short = r.accepted! - r.reached!;
      const verdict = Number.isNaN(r.reached)
        ? 'SMSC count unknown'
        : short > 0
          ? `${short} accepted but not at the SMSC`
          : `all reached the SMSC${short < 0 ? ` (+${-short} in flight when wrk stopped)` : ''}`;
      return `- ${r.system}: ${r.accepted} accepted, ${r.reached} at the SMSC — ${verdict}${r.note ? `; ${r.note}` : ''}.`;
    });
  const knobs = `BENCH_CONNECTIONS=${connections} BENCH_SECONDS=${seconds} BENCH_WARMUP=${warmup}${process.env.HERMOD_GATEWAYS ? ` HERMOD_GATEWAYS=${gateways}` : ''}`;
  const machine = [
    `${os.availableParallelism()} cores (${cpu})`,
    `load average at start ${loadStart.map((l) => l.toFixed(2)).join(' / ')}, at end ${loadEnd.map((l) => l.toFixed(2)).join(' / ')} (1 / 5 / 15 min)`,
    `node ${process.version}`,
    `Kannel ${debianVersion('kannel')}`,
    `wrk ${debianVersion('wrk')}`,
    ...(process.env.BENCH_NOTE ? [process.env.BENCH_NOTE] : []),
  ].join('; ');

  console.log(`\npeers, ${connections} connections, ${seconds} s each (wrk -t ${threads} --latency), text ${JSON.stringify(TEXT)}\n`);
  console.log(table);
  console.log(`\nReached the SMSC (accepted counts warm-up and measured run):\n${checks.join('\n')}`);
  console.log(`\nEnd-to-end pace, sampled every second of the measured run (kept pace: the backlog grew by at most 1 % of the acceptance rate):\n`);
  console.log(paceTable);
  console.log(`\nMachine: ${machine}`);

  if (!process.env.BENCH_NO_RESULTS) {
    const stamp = `${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    appendPeersResults(
      RESULTS,
      [
        `### ${stamp}`,
        '',
        `Command: \`npm run bench:peers\` (${knobs}; wrk -t ${threads} -c ${connections} -d ${seconds}s --latency after a ${warmup} s warm-up; text ${JSON.stringify(TEXT)}; hermod with ${gateways} gateway process(es) (HERMOD_GATEWAYS) and its SMSC simulator in the bench process, receipts after ${receiptDelayMs} ms).`,
        '',
        `Machine: ${machine}.`,
        '',
        table,
        '',
        ...checks,
        '',
        'End-to-end pace, sampled every second of the measured run (kept pace: the backlog, accepted and not yet at the SMSC, grew by at most 1 % of the acceptance rate):',
        '',
        paceTable,
      ].join('\n'),
    );
    console.log(`\nappended to ${path.relative(process.cwd(), RESULTS)}`);
  }
  if (lost.length > 0) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
