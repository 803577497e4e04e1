import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startHermod, type HermodProcess } from '../../test/support/hermod-process';
import { createSmscSimulator } from '../../workers/simulators/smsc-simulator';
import type { CallbackReceiver } from './callback-receiver';
import { createCpuMeter } from './cpu-meter';
import { destination } from './destination';
import { formatMs } from './format-ms';
import { hermodPid } from './hermod-pid';
import type { CallbackLoad } from './measure-callback-floor';
import { paced } from './paced';
import { PROGRESS_MS } from './progress-ms';
import { sleep } from './sleep';
import { spread, type Spread } from './spread';

export interface HermodCallbackOptions extends CallbackLoad {
  /** The simulator's delay before each delivery receipt. */
  receiptDelayMs: number;
  /** Seconds to wait for late callbacks. */
  drainS: number;
  /** HERMOD_GATEWAYS of the started service. */
  gateways: string;
  /**
   * A second application whose status callbacks go to `receiver` (one that
   * answers slowly), sending `rate` messages/s through the warm-up and the
   * measured run: what it must not do is delay the measured application's callbacks.
   */
  slowApp?: { receiver: CallbackReceiver; rate: number };
  /** Arguments for hermod's node processes (e.g. --cpu-prof). */
  nodeArgs?: string[];
}

/** Seconds after the load began (warm-up included) from which a message counts as sent in the steady state. */
export const STEADY_AFTER_S = 10;

export interface HermodFigures {
  latency: Spread;
  /**
   * The same, for the measured messages sent STEADY_AFTER_S or more after the
   * load began: without the first seconds after a start, when a service
   * whose code is not yet optimised falls behind and catches up.
   */
  steadyLatency: Spread;
  sendLatency: Spread;
  /** POST sent → the simulator has the message (context: the way in, before the receipt). */
  submitLatency: Spread;
  /** POST sent → the first callback of each status (context). */
  byStatus: { status: string; spread: Spread }[];
  logFile: string;
  fired: number;
  firedSeconds: number;
  accepted: number;
  refused: number;
  errors: number;
  missing: { noCarrierMessage: number; noReceipt: number; noCallback: number };
  idMismatches: number;
  callbacks: Map<string, number>;
  loopDelayP99: number;
  loopDelayMax: number;
  /** First measured send → last 202 answer. */
  acceptSeconds: number;
  cpu: { label: string; percent: number }[];
  /** Connections hermod opened to the receiver during the measured run, and callbacks it made in that time. */
  callbackConnections: number;
  callbacksInRun: number;
  /** The slow application's sends (202 answers) and the callbacks its receiver had by the end of the drain. */
  slowApp?: { accepted: number; failed: number; callbacks: number };
}

/**
 * Starts hermod with a fresh data directory and the SMSC simulator, points
 * acme's status callback at `receiver`, sends at the paced open-model rate and
 * measures receipt → `received` callback per message.
 */
export async function measureHermodCallbacks(
  receiver: CallbackReceiver,
  track: { onCallback?: (body: string, at: number) => void },
  o: HermodCallbackOptions,
): Promise<HermodFigures> {
  const { rate, duration, warmup, connections, receiptDelayMs, drainS, gateways, slowApp } = o;
  receiver.statuses.clear();
  const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs });
  const { port } = await simulator.start();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-callback-bench-'));
  let hermod: HermodProcess | undefined;
  const agents: https.Agent[] = [];
  try {
    hermod = await startHermod({
      dataDir,
      ...(o.nodeArgs ? { nodeArgs: o.nodeArgs } : {}),
      env: {
        HERMOD_SMSC_SIMULATOR: 'false',
        HERMOD_SMPP_PORT: String(port),
        HERMOD_CALLBACK_ALLOW_PRIVATE: 'true',
        ...(process.env.HERMOD_CALLBACK_THREADS ? { HERMOD_CALLBACK_THREADS: process.env.HERMOD_CALLBACK_THREADS } : {}),
        HERMOD_GATEWAYS: gateways,
      },
    });
    const set = await hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `http://127.0.0.1:${receiver.port}/status`]);
    if (set.code !== 0) throw new Error(`hermod apps set-callbacks answered ${set.code}: ${set.output}`);
    const SLOW_APP = 'slow-receiver';
    const SLOW_PASSWORD = 'tōmuri-🐢';
    if (slowApp) {
      const created = await hermod.cli(['apps', 'create', SLOW_APP, '--password', SLOW_PASSWORD]);
      if (created.code !== 0) throw new Error(`hermod apps create answered ${created.code}: ${created.output}`);
      const slowSet = await hermod.cli(['apps', 'set-callbacks', SLOW_APP, '--status', `http://localhost:${slowApp.receiver.port}/slow`]);
      if (slowSet.code !== 0) throw new Error(`hermod apps set-callbacks answered ${slowSet.code}: ${slowSet.output}`);
    }

    const run = Date.now().toString(36);
    const tokenOf = (i: number): string => `cb-${run}-${i}`;
    const TOKEN = /\bcb-[0-9a-z]+-\d+\b/;
    const carrierByToken = new Map<string, string>();
    const sentAt = new Map<string, number>();
    const submittedAt = new Map<string, number>();
    const receiptAt = new Map<string, number>();
    const idByToken = new Map<string, string>();
    const callbackAt = new Map<string, { at: number; id: string }>();
    simulator.on('message', (m) => {
      const token = TOKEN.exec(m.text)?.[0];
      if (!token) return;
      carrierByToken.set(token, m.carrierMessageId);
      submittedAt.set(token, performance.now());
    });
    // Taken here rather than from `r.at` (whole milliseconds): the event is emitted as the deliver_sm is queued.
    simulator.on('receipt', (r) => {
      if (!receiptAt.has(r.carrierMessageId)) receiptAt.set(r.carrierMessageId, performance.now());
    });
    const latencyOf = (token: string): number | undefined => {
      const carrier = carrierByToken.get(token);
      const receipt = carrier === undefined ? undefined : receiptAt.get(carrier);
      const cb = callbackAt.get(token);
      return receipt === undefined || cb === undefined ? undefined : cb.at - receipt;
    };
    const windowLatencies: number[] = [];
    // Every status's first callback per message, to show where the time goes before the receipt.
    const statusAt = new Map<string, Map<string, number>>();
    track.onCallback = (body, at) => {
      const json = JSON.parse(body) as { id: string; status: string; reference?: string };
      if (!json.reference) return;
      const seen = statusAt.get(json.status) ?? new Map<string, number>();
      statusAt.set(json.status, seen);
      if (!seen.has(json.reference)) seen.set(json.reference, at);
      if (json.status !== 'received' || callbackAt.has(json.reference)) return;
      callbackAt.set(json.reference, { at, id: json.id });
      const l = latencyOf(json.reference);
      if (l !== undefined) windowLatencies.push(l);
    };

    const agent = new https.Agent({ ca: hermod.ca(), keepAlive: true, maxSockets: connections });
    agents.push(agent);
    const auth = 'Basic ' + Buffer.from('acme:secret').toString('base64');
    const target = new URL('/rest/sms/v2/messages', hermod.baseUrl);
    const warmCount = Math.round(rate * warmup);
    const measured: string[] = [];
    const sendLatencies: number[] = [];
    let accepted = 0;
    let lastAcceptedAt = 0;
    let refused = 0;
    let errors = 0;
    let inFlight = 0;
    const send = (i: number): void => {
      const token = tokenOf(i);
      const body = JSON.stringify({ destination: destination(i), content: `Your code is 123456 ${token}`, reference: token });
      const t0 = performance.now();
      sentAt.set(token, t0);
      inFlight++;
      const req = https.request(
        target,
        { method: 'POST', agent, headers: { authorization: auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            inFlight--;
            if (res.statusCode !== 202) {
              refused++;
              if (refused <= 3) console.log(`  send ${i} answered ${res.statusCode}: ${text.slice(0, 200)}`);
              return;
            }
            if (i < warmCount) return;
            accepted++;
            lastAcceptedAt = performance.now();
            sendLatencies.push(lastAcceptedAt - t0);
            idByToken.set(token, (JSON.parse(text) as { id: string }).id);
            measured.push(token);
          });
        },
      );
      req.on('error', (err) => {
        inFlight--;
        errors++;
        if (errors <= 3) console.log(`  send ${i} failed: ${err.message}`);
      });
      req.end(body);
    };

    const slowAuth = 'Basic ' + Buffer.from(`${SLOW_APP}:${SLOW_PASSWORD}`).toString('base64');
    const slowSent = { accepted: 0, failed: 0 };
    const sendSlow = (i: number): void => {
      const body = JSON.stringify({ destination: destination(9_000_000 + i), content: `Kia ora, e hoa mā — he pūrere pōturi 🐢 ${i}` });
      const req = https.request(
        target,
        { method: 'POST', agent, headers: { authorization: slowAuth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 202 ? slowSent.accepted++ : slowSent.failed++));
        },
      );
      req.on('error', () => slowSent.failed++);
      req.end(body);
    };
    // The slow application sends through the warm-up and the measured run, beside the measured one.
    const slowRun = slowApp ? paced(slowApp.rate, warmup + duration, sendSlow) : Promise.resolve(undefined);
    const slowCallbacksBefore = slowApp ? [...slowApp.receiver.statuses.values()].reduce((a, b) => a + b, 0) : 0;

    console.log(
      `sending ${rate}/s for ${warmup} s warm-up + ${duration} s to ${hermod.baseUrl} (${gateways} gateway process(es), simulator receipts after ${receiptDelayMs} ms)${slowApp ? `; beside it ${SLOW_APP} sends ${slowApp.rate}/s, its receiver answering after ${slowApp.receiver.answerAfterMs} ms` : ''}`,
    );
    const loop = monitorEventLoopDelay({ resolution: 10 });
    let lastFired = 0;
    const startedAt = performance.now();
    const progress = setInterval(() => {
      const l = spread(windowLatencies.splice(0));
      console.log(
        `  ${((performance.now() - startedAt) / 1000).toFixed(0)} s: ${lastFired} fired, ${inFlight} in flight, ${callbackAt.size} received callbacks; receipt → callback in the last ${PROGRESS_MS / 1000} s p50 ${formatMs(l.p50)} ms, p99 ${formatMs(l.p99)} ms, max ${formatMs(l.max)} ms`,
      );
    }, PROGRESS_MS);
    await paced(rate, warmup, (i) => send(i));
    const cpu = createCpuMeter(hermodPid());
    loop.enable();
    cpu.start();
    const connectionsBefore = receiver.connections();
    const callbacksBefore = [...receiver.statuses.values()].reduce((a, b) => a + b, 0);
    const measuredFrom = performance.now();
    const main = await paced(rate, duration, (i) => {
      lastFired = warmCount + i + 1;
      send(warmCount + i);
    });

    await slowRun;

    // Late callbacks: wait for every measured message, or give up after BENCH_DRAIN.
    const deadline = performance.now() + drainS * 1000;
    const allIn = (): boolean => inFlight === 0 && measured.every((t) => callbackAt.has(t));
    while (!allIn() && performance.now() < deadline) await sleep(100);
    const cpuUse = cpu.stop();
    loop.disable();
    clearInterval(progress);

    const latencies: number[] = [];
    const steadyLatencies: number[] = [];
    const steadyFrom = startedAt + STEADY_AFTER_S * 1000;
    const submitLatencies: number[] = [];
    const missing = { noCarrierMessage: 0, noReceipt: 0, noCallback: 0 };
    let idMismatches = 0;
    for (const token of measured) {
      const carrier = carrierByToken.get(token);
      if (carrier === undefined) missing.noCarrierMessage++;
      else if (!receiptAt.has(carrier)) missing.noReceipt++;
      else if (!callbackAt.has(token)) missing.noCallback++;
      else {
        latencies.push(latencyOf(token)!);
        if (sentAt.get(token)! >= steadyFrom) steadyLatencies.push(latencyOf(token)!);
      }
      const submitted = submittedAt.get(token);
      if (submitted !== undefined) submitLatencies.push(submitted - sentAt.get(token)!);
      const cb = callbackAt.get(token);
      if (cb && cb.id !== idByToken.get(token)) idMismatches++;
    }
    return {
      latency: spread(latencies),
      steadyLatency: spread(steadyLatencies),
      sendLatency: spread(sendLatencies),
      submitLatency: spread(submitLatencies),
      byStatus: [...statusAt].map(([status, seen]) => ({
        status,
        spread: spread(measured.filter((t) => seen.has(t)).map((t) => seen.get(t)! - sentAt.get(t)!)),
      })),
      logFile: path.join(dataDir, 'hermod-output.log'),
      fired: main.fired,
      firedSeconds: main.seconds,
      accepted,
      refused,
      errors,
      missing,
      idMismatches,
      callbacks: new Map(receiver.statuses),
      loopDelayP99: loop.percentile(99) / 1e6,
      loopDelayMax: loop.max / 1e6,
      acceptSeconds: (lastAcceptedAt - measuredFrom) / 1000,
      cpu: cpuUse,
      callbackConnections: receiver.connections() - connectionsBefore,
      callbacksInRun: [...receiver.statuses.values()].reduce((a, b) => a + b, 0) - callbacksBefore,
      ...(slowApp ? { slowApp: { ...slowSent, callbacks: [...slowApp.receiver.statuses.values()].reduce((a, b) => a + b, 0) - slowCallbacksBefore } } : {}),
    };
  } finally {
    for (const a of agents) a.destroy();
    if (hermod) {
      await hermod.stop();
      fs.writeFileSync(path.join(dataDir, 'hermod-output.log'), hermod.output());
    }
    await simulator.stop();
  }
}
