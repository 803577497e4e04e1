/**
 * Delivery report → callback benchmark (DESIGN.md §5: p99 ≤ 250 ms at
 * 1,000/s). Starts hermod with a fresh data directory, the SMSC simulator and
 * a plain node:http callback receiver in this process, sets acme's status
 * callback to the receiver, then sends v2 messages at a paced open-model rate
 * and measures, per message, the time from the simulator writing its delivery
 * receipt (deliver_sm) to the receiver having the `received` callback for
 * that message. Both instants are taken on this process's clock. Once hermod
 * has stopped, the floor is measured against the same receiver at the same
 * rate: a bare node:http POST from this process, send → body at the receiver.
 *
 *   npm run bench:callbacks
 *   BENCH_RATE=500 BENCH_DURATION=10 npm run bench:callbacks
 *
 * Each message carries a unique token in its content and its reference: the
 * simulator's `message` event maps the token to the carrier message id, its
 * `receipt` event gives the receipt's time, and the callback body's
 * `reference` names the token (its `id` is checked against the 202 answer).
 *
 * For context it also prints, per message, POST → 202, POST → submit_sm at
 * the simulator and POST → the first callback of each status; the CPU used
 * by each hermod role, by this process and by the rest of the machine; the
 * TCP connections hermod opened to the receiver; and this process's
 * event-loop delay (it bounds how late this process can see either instant).
 * hermod's output is kept in <data dir>/hermod-output.log.
 *
 * Knobs: BENCH_RATE messages/s (1000), BENCH_DURATION seconds (20),
 * BENCH_WARMUP seconds at the same rate, not measured (2), BENCH_CONNECTIONS
 * keep-alive sockets to hermod (256), BENCH_RECEIPT_DELAY_MS of the simulator
 * (20), BENCH_DRAIN seconds to wait for late callbacks (30), HERMOD_GATEWAYS (1).
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startHermod, type HermodProcess } from '../test/support/hermod-process';
import { freePort } from '../test/support/free-port';
import { createSmscSimulator } from '../workers/simulators/smsc-simulator';

const rate = Number(process.env.BENCH_RATE ?? 1000);
const duration = Number(process.env.BENCH_DURATION ?? 20);
const warmup = Number(process.env.BENCH_WARMUP ?? 2);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 256);
const receiptDelayMs = Number(process.env.BENCH_RECEIPT_DELAY_MS ?? 20);
const drainS = Number(process.env.BENCH_DRAIN ?? 30);
const gateways = process.env.HERMOD_GATEWAYS ?? '1';
const TARGET_P99_MS = 250;
const PROGRESS_MS = 5000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---- figures ----

interface Spread {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function spread(values: number[]): Spread {
  const v = Float64Array.from(values).sort();
  const at = (q: number): number => (v.length === 0 ? NaN : v[Math.min(v.length - 1, Math.ceil(q * v.length) - 1)]!);
  return { count: v.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: v.length === 0 ? NaN : v[v.length - 1]! };
}

const ms = (x: number): string => (Number.isNaN(x) ? '–' : x < 10 ? x.toFixed(1) : String(Math.round(x)));

// ---- CPU: the hermod process tree by role, this process, and the rest of the machine ----

/** /proc/<pid>/stat utime + stime, in clock ticks (100 per second on Linux). */
const TICKS_PER_S = 100;

function cpuTicks(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** Every process under `root` (root included) with the role it runs (`HERMOD_ROLE`, or its command). */
function processTree(root: number): { pid: number; role: string }[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      /* gone while we looked */
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree.map((pid) => {
    let role = 'supervisor';
    try {
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const r = env.find((e) => e.startsWith('HERMOD_ROLE='))?.slice('HERMOD_ROLE='.length);
      const i = env.find((e) => e.startsWith('HERMOD_ROLE_INDEX='))?.slice('HERMOD_ROLE_INDEX='.length);
      if (r) role = r === 'gateway' ? `gateway ${i ?? ''}`.trim() : r;
    } catch {
      /* gone */
    }
    return { pid, role };
  });
}

/** The `node bin/hermod.js start` this process spawned. */
function hermodPid(): number | undefined {
  return processTree(process.pid).map((p) => p.pid).find((p) => p !== process.pid && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('bin/hermod.js'));
}

const machineBusyMs = (): { busy: number; total: number } =>
  os.cpus().reduce((a, c) => {
    const t = c.times;
    const busy = t.user + t.nice + t.sys + t.irq;
    return { busy: a.busy + busy, total: a.total + busy + t.idle };
  }, { busy: 0, total: 0 });

/** CPU use between start() and stop(), as % of one core: per hermod role, this process, and everything else. */
function createCpuMeter(root: number | undefined) {
  const snapshot = () => ({
    at: performance.now(),
    machine: machineBusyMs(),
    self: cpuTicks(process.pid),
    roles: (root === undefined ? [] : processTree(root)).map((p) => ({ ...p, ticks: cpuTicks(p.pid) })),
  });
  let first: ReturnType<typeof snapshot> | undefined;
  return {
    start: () => void (first = snapshot()),
    stop(): { label: string; percent: number }[] {
      const last = snapshot();
      if (!first) return [];
      const seconds = (last.at - first.at) / 1000;
      const pct = (ticks: number): number => (100 * ticks) / TICKS_PER_S / seconds;
      // Helpers a role starts (tsx's esbuild service) inherit its HERMOD_ROLE and are counted with it.
      const byRole = new Map<string, number>();
      let ours = last.self - first.self;
      for (const p of last.roles) {
        const used = p.ticks - (first.roles.find((q) => q.pid === p.pid)?.ticks ?? 0);
        ours += used;
        byRole.set(p.role, (byRole.get(p.role) ?? 0) + used);
      }
      const rows = [...byRole].map(([role, ticks]) => ({ label: `hermod ${role}`, percent: pct(ticks) }));
      rows.push({ label: 'this bench process (load, receiver, SMSC simulator)', percent: pct(last.self - first.self) });
      const machineBusyS = (last.machine.busy - first.machine.busy) / 1000;
      rows.push({ label: 'everything else on the machine', percent: Math.max(0, (100 * machineBusyS) / seconds - pct(ours)) });
      rows.push({ label: `machine total (${os.availableParallelism()} cores = ${os.availableParallelism() * 100} %)`, percent: (100 * machineBusyS) / seconds });
      return rows;
    },
  };
}

// ---- open-model pacing ----

/**
 * Calls `fire(i)` at `perSecond` for `seconds`, on schedule whether or not
 * earlier calls have finished (an open model: a slow service does not slow
 * the arrivals). Resolves when the last one has been fired.
 */
async function paced(perSecond: number, seconds: number, fire: (i: number) => void): Promise<{ fired: number; seconds: number }> {
  const total = Math.round(perSecond * seconds);
  const start = performance.now();
  let i = 0;
  while (i < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) * perSecond) / 1000) + 1);
    for (; i < due; i++) fire(i);
    await sleep(1);
  }
  return { fired: i, seconds: (performance.now() - start) / 1000 };
}

// ---- the callback receiver ----

interface Receiver {
  port: number;
  /** Calls by status, whole run. */
  statuses: Map<string, number>;
  /** TCP connections accepted so far. */
  connections(): number;
  close(): void;
}

/** A bare node:http server that answers 200 at once and hands every body, with its arrival time, to `onBody`. */
async function startReceiver(onBody: (path: string, body: string, at: number, headers: http.IncomingHttpHeaders) => void): Promise<Receiver> {
  const statuses = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const at = performance.now();
      res.writeHead(200).end();
      onBody(req.url ?? '', body, at, req.headers);
    });
  });
  server.keepAliveTimeout = 65_000;
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, statuses, connections: () => connections, close: () => server.close() };
}

// ---- the hermod run ----

interface HermodFigures {
  latency: Spread;
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
}

async function measureHermod(receiver: Receiver, track: { onCallback?: (body: string, at: number) => void }): Promise<HermodFigures> {
  const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs });
  const { port } = await simulator.start();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-callback-bench-'));
  let hermod: HermodProcess | undefined;
  const agents: https.Agent[] = [];
  try {
    hermod = await startHermod({
      dataDir,
      env: {
        HERMOD_SMSC_SIMULATOR: 'false',
        HERMOD_SMPP_PORT: String(port),
        HERMOD_SMSC_PORT: String(await freePort()),
        HERMOD_CALLBACK_ALLOW_PRIVATE: 'true',
        HERMOD_GATEWAYS: gateways,
      },
    });
    const set = await hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `http://127.0.0.1:${receiver.port}/status`]);
    if (set.code !== 0) throw new Error(`hermod apps set-callbacks answered ${set.code}: ${set.output}`);

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
      const body = JSON.stringify({ destination: `+6421${String(i).padStart(7, '0')}`, content: `Your code is 123456 ${token}`, reference: token });
      const t0 = performance.now();
      sentAt.set(token, t0);
      inFlight++;
      const req = https.request(target, { method: 'POST', agent, headers: { authorization: auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
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
      });
      req.on('error', (err) => {
        inFlight--;
        errors++;
        if (errors <= 3) console.log(`  send ${i} failed: ${err.message}`);
      });
      req.end(body);
    };

    console.log(`sending ${rate}/s for ${warmup} s warm-up + ${duration} s to ${hermod.baseUrl} (${gateways} gateway process(es), simulator receipts after ${receiptDelayMs} ms)`);
    const loop = monitorEventLoopDelay({ resolution: 10 });
    let lastFired = 0;
    const startedAt = performance.now();
    const progress = setInterval(() => {
      const l = spread(windowLatencies.splice(0));
      console.log(`  ${((performance.now() - startedAt) / 1000).toFixed(0)} s: ${lastFired} fired, ${inFlight} in flight, ${callbackAt.size} received callbacks; receipt → callback in the last ${PROGRESS_MS / 1000} s p50 ${ms(l.p50)} ms, p99 ${ms(l.p99)} ms, max ${ms(l.max)} ms`);
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

    // Late callbacks: wait for every measured message, or give up after BENCH_DRAIN.
    const deadline = performance.now() + drainS * 1000;
    const allIn = (): boolean => inFlight === 0 && measured.every((t) => callbackAt.has(t));
    while (!allIn() && performance.now() < deadline) await sleep(100);
    const cpuUse = cpu.stop();
    loop.disable();
    clearInterval(progress);

    const latencies: number[] = [];
    const submitLatencies: number[] = [];
    const missing = { noCarrierMessage: 0, noReceipt: 0, noCallback: 0 };
    let idMismatches = 0;
    for (const token of measured) {
      const carrier = carrierByToken.get(token);
      if (carrier === undefined) missing.noCarrierMessage++;
      else if (!receiptAt.has(carrier)) missing.noReceipt++;
      else if (!callbackAt.has(token)) missing.noCallback++;
      else latencies.push(latencyOf(token)!);
      const submitted = submittedAt.get(token);
      if (submitted !== undefined) submitLatencies.push(submitted - sentAt.get(token)!);
      const cb = callbackAt.get(token);
      if (cb && cb.id !== idByToken.get(token)) idMismatches++;
    }
    return {
      latency: spread(latencies),
      sendLatency: spread(sendLatencies),
      submitLatency: spread(submitLatencies),
      byStatus: [...statusAt].map(([status, seen]) => ({ status, spread: spread(measured.filter((t) => seen.has(t)).map((t) => seen.get(t)! - sentAt.get(t)!)) })),
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

// ---- the floor: one bare HTTP hop from this process to the same receiver ----

interface FloorFigures {
  oneWay: Spread;
  roundTrip: Spread;
  seconds: number;
  errors: number;
}

async function measureFloor(receiver: Receiver, track: { onFloor?: (seq: string, at: number) => void }, sampleBody: string): Promise<FloorFigures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const startedAt = new Map<string, number>();
  const oneWay: number[] = [];
  const roundTrip: number[] = [];
  let errors = 0;
  let inFlight = 0;
  track.onFloor = (seq, at) => {
    const t0 = startedAt.get(seq);
    if (t0 !== undefined && !seq.startsWith('-')) oneWay.push(at - t0);
  };
  const fire = (i: number): void => {
    const seq = String(i);
    const t0 = performance.now();
    startedAt.set(seq, t0);
    inFlight++;
    const req = http.request({ host: '127.0.0.1', port: receiver.port, path: '/floor', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(sampleBody), 'x-bench-seq': seq } }, (res) => {
      res.resume();
      res.on('end', () => {
        inFlight--;
        if (i >= 0) roundTrip.push(performance.now() - t0);
      });
    });
    req.on('error', () => {
      inFlight--;
      errors++;
    });
    req.end(sampleBody);
  };
  await paced(rate, warmup, (i) => fire(-1 - i));
  const run = await paced(rate, duration, fire);
  const deadline = performance.now() + 10_000;
  while (inFlight > 0 && performance.now() < deadline) await sleep(20);
  agent.destroy();
  return { oneWay: spread(oneWay), roundTrip: spread(roundTrip), seconds: run.seconds, errors };
}

// ---- the run ----

async function main(): Promise<void> {
  const track: { onCallback?: (body: string, at: number) => void; onFloor?: (seq: string, at: number) => void } = {};
  const receiver = await startReceiver((urlPath, body, at, headers) => {
    if (urlPath === '/floor') return track.onFloor?.(String(headers['x-bench-seq']), at);
    if (urlPath !== '/status') return;
    const status = /"status":"([a-z_]+)"/.exec(body)?.[1] ?? '?';
    receiver.statuses.set(status, (receiver.statuses.get(status) ?? 0) + 1);
    track.onCallback?.(body, at);
  });
  let failed = false;
  try {
    const h = await measureHermod(receiver, track);
    const sampleBody = JSON.stringify({ id: '2b1e6f0e-7d1c-4b5e-9a51-3f1f7a8c9d10', message_id: '2b1e6f0e-7d1c-4b5e-9a51-3f1f7a8c9d10', status: 'received', detail: '+64210000001', reference: 'cb-xxxxxxxx-12345' });
    const f = await measureFloor(receiver, track, sampleBody);

    const sendRate = h.fired / h.firedSeconds;
    const acceptedRate = h.accepted / Math.max(h.firedSeconds, h.acceptSeconds);
    const lost = h.missing.noCarrierMessage + h.missing.noReceipt + h.missing.noCallback;
    const met = h.latency.p99 <= TARGET_P99_MS && acceptedRate >= 0.95 * 1000 && lost === 0 && h.latency.count > 0;
    console.log(`\ndelivery report → callback, ${rate}/s offered for ${duration} s (after ${warmup} s warm-up), ${os.availableParallelism()} cores, node ${process.version}, HERMOD_GATEWAYS=${gateways}, simulator receipts after ${receiptDelayMs} ms\n`);
    console.log('| what | count | p50 ms | p90 ms | p99 ms | max ms |');
    console.log('|---|---:|---:|---:|---:|---:|');
    const row = (what: string, s: Spread): void => console.log(`| ${what} | ${s.count} | ${ms(s.p50)} | ${ms(s.p90)} | ${ms(s.p99)} | ${ms(s.max)} |`);
    row('hermod: receipt deliver_sm written → `received` callback at the receiver', h.latency);
    row('baseline: bare node:http POST → body at the same receiver', f.oneWay);
    row('baseline: bare node:http POST, round trip', f.roundTrip);
    row('hermod: POST /rest/sms/v2/messages → 202 (for context)', h.sendLatency);
    row('hermod: POST sent → submit_sm at the simulator (for context)', h.submitLatency);
    for (const b of h.byStatus) row(`hermod: POST sent → \`${b.status}\` callback at the receiver (for context)`, b.spread);
    console.log(`\noffered ${h.fired} sends in ${h.firedSeconds.toFixed(2)} s (${Math.round(sendRate)}/s); 202 accepted ${h.accepted}, the last ${h.acceptSeconds.toFixed(2)} s after the first send (${Math.round(acceptedRate)}/s achieved), other answers ${h.refused}, errors ${h.errors}`);
    console.log(`measured messages without a carrier message ${h.missing.noCarrierMessage}, without a receipt ${h.missing.noReceipt}, without a received callback after ${drainS} s ${h.missing.noCallback}; callback id ≠ 202 id: ${h.idMismatches}`);
    console.log(`status callbacks at the receiver (warm-up included): ${JSON.stringify(Object.fromEntries(h.callbacks))}`);
    console.log(`during the measured run and its drain hermod made ${h.callbacksInRun} callbacks over ${h.callbackConnections} new TCP connections to the receiver`);
    console.log(`this process's event-loop delay during the measured run (both timestamps are taken here): p99 ${ms(h.loopDelayP99)} ms, max ${ms(h.loopDelayMax)} ms`);
    console.log(`CPU during the measured run and its drain, % of one core: ${h.cpu.map((c) => `${c.label} ${Math.round(c.percent)}`).join('; ')}`);
    console.log(`hermod's output: ${h.logFile}`);
    console.log(`floor run: ${Math.round((rate * duration) / f.seconds)}/s offered, errors ${f.errors}`);
    console.log(`hermod p99 / floor p99 (one way): ${(h.latency.p99 / f.oneWay.p99).toFixed(1)}`);
    console.log(`DESIGN.md §5 target, p99 ≤ ${TARGET_P99_MS} ms at 1,000/s: ${met ? 'met' : 'not met'}${rate < 1000 ? ' (offered rate below 1,000/s)' : ''}`);
    if (lost > 0 || h.errors > 0 || h.refused > 0) failed = true;
  } finally {
    receiver.close();
  }
  if (failed) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
