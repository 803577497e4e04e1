/**
 * Campaign benchmark (DESIGN.md §5): a list of BENCH_MEMBERS members imported
 * in one streamed request, a campaign to the same members scheduled for now,
 * the time until the SMSC simulator has received one submit_sm per member,
 * and the campaign's report read as a stream. Peak RSS of the whole service
 * (the hermod process tree) is sampled throughout. In the same run, the
 * simulator's own intake of raw submit_sm is measured as the ceiling.
 *
 *   npm run bench:campaign                       # starts hermod itself, SMSC simulator in this process
 *   BENCH_MEMBERS=20000 npm run bench:campaign   # a quick run
 *   BENCH_URL=https://host:8443 BENCH_USER=app BENCH_PASS=pw npm run bench:campaign   # a running service
 *
 * Knobs: BENCH_MEMBERS (1000000), BENCH_TIMEOUT seconds for the fan-out (600),
 * BENCH_RECEIPT_DELAY_MS of the simulator (20), HERMOD_GATEWAYS (1),
 * BENCH_SMSC_SUBMITS / BENCH_SMSC_BINDS / BENCH_SMSC_WINDOW for the ceiling
 * (min(members, 200000) / 1 / 1024), BENCH_KEEP_DATA=1 keeps the started
 * service's data directory. Any other HERMOD_* variable is passed to
 * the started service. With BENCH_URL there is no simulator to watch: the
 * fan-out is followed by polling the report, and RSS is not sampled.
 */
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { startHermod, type HermodProcess } from '../test/support/hermod-process';
import { freePort } from '../test/support/free-port';
import { createSmscSimulator, type SmscSimulator } from '../workers/simulators/smsc-simulator';
import { measureSmscIntake, type IntakeFigures } from './smsc-intake-baseline';

const members = Number(process.env.BENCH_MEMBERS ?? 1_000_000);
const timeoutS = Number(process.env.BENCH_TIMEOUT ?? 600);
const receiptDelayMs = Number(process.env.BENCH_RECEIPT_DELAY_MS ?? 20);
const gateways = process.env.HERMOD_GATEWAYS ?? '1';
const ceilingOptions = {
  submits: Number(process.env.BENCH_SMSC_SUBMITS ?? Math.min(members, 200_000)),
  binds: Number(process.env.BENCH_SMSC_BINDS ?? 1),
  window: Number(process.env.BENCH_SMSC_WINDOW ?? 1024),
  receiptDelayMs,
};
const PROGRESS_MS = 5000;
const MB = 1024 * 1024;
const NAMES = ['Aroha', 'Mere', 'Tama', 'Wiremu', 'Hana', 'Nikau', 'Kiri', 'Rawiri', 'Ana', 'Manaia', 'Olivia', 'Jack', 'Isla', 'Noah', 'Charlotte', 'Leo'];

const seconds = (fromMs: number): number => (performance.now() - fromMs) / 1000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const destination = (i: number): string => `+6421${String(i).padStart(7, '0')}`;

// ---- the request body: members generated as the socket asks for them ----

/** `{...head, "members":[...]}` as a stream, `count` members, never one string. */
function membersBody(head: Record<string, unknown>, count: number, progress: { generated: number }): Readable {
  const open = JSON.stringify(head).slice(0, -1) + (Object.keys(head).length > 0 ? ',' : '') + '"members":[';
  let i = 0;
  let started = false;
  return new Readable({
    highWaterMark: 256 * 1024,
    read() {
      if (i >= count) {
        this.push(null);
        return;
      }
      let text = started ? '' : open;
      started = true;
      const end = Math.min(count, i + 2000);
      for (; i < end; i++) text += `${i > 0 ? ',' : ''}{"destination":"${destination(i)}","param1":"${NAMES[i % NAMES.length]}"}`;
      progress.generated = i;
      if (i >= count) text += ']}';
      this.push(text);
    },
  });
}

// ---- HTTP ----

interface Service {
  url: string;
  auth: string;
  app: string;
  agent: https.Agent;
}

function request(s: Service, method: string, urlPath: string, body?: Readable): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: s.auth, ...(body ? { 'content-type': 'application/json' } : {}) };
    const req = https.request(new URL(urlPath, s.url), { method, headers, agent: s.agent }, resolve);
    req.on('error', reject);
    if (body) {
      body.on('error', reject);
      body.pipe(req);
    } else req.end();
  });
}

async function text(res: IncomingMessage): Promise<string> {
  let out = '';
  for await (const chunk of res) out += (chunk as Buffer).toString('utf8');
  return out;
}

async function postMembers(s: Service, what: string, head: Record<string, unknown>, progress: { generated: number }): Promise<number> {
  const res = await request(s, 'POST', `/rest/campaign_manager/v1/${encodeURIComponent(s.app)}/${what}`, membersBody(head, members, progress));
  const answer = await text(res);
  if (res.statusCode !== 201) throw new Error(`POST ${what} answered ${res.statusCode}: ${answer.slice(0, 500)}`);
  return (JSON.parse(answer) as { id: number }).id;
}

/**
 * Reads the campaign's report as it streams, counting rows (`"message_id"`)
 * and statuses without keeping the body.
 */
async function readReport(s: Service, campaignId: number, progress: { rows: number }): Promise<{ rows: number; statuses: Map<string, number> }> {
  const res = await request(s, 'GET', `/rest/campaign_manager/v1/${encodeURIComponent(s.app)}/${campaignId}/report`);
  if (res.statusCode !== 200) throw new Error(`GET report answered ${res.statusCode}: ${(await text(res)).slice(0, 500)}`);
  const statuses = new Map<string, number>();
  const count = (t: string): void => {
    for (let at = t.indexOf('"message_id"'); at !== -1; at = t.indexOf('"message_id"', at + 12)) progress.rows++;
    for (const m of t.matchAll(/"status":"([a-z]+)"/g)) statuses.set(m[1]!, (statuses.get(m[1]!) ?? 0) + 1);
  };
  // Rows are counted up to the last complete one in hand; the rest waits for the next chunk.
  let carry = '';
  for await (const chunk of res) {
    const t = carry + (chunk as Buffer).toString('latin1');
    const cut = t.lastIndexOf('},');
    if (cut === -1) {
      carry = t;
      continue;
    }
    count(t.slice(0, cut));
    carry = t.slice(cut);
  }
  count(carry);
  return { rows: progress.rows, statuses };
}

// ---- memory of the hermod process tree ----

function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      /* gone while we looked */
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The `node bin/hermod.js start` this process spawned (startHermod does not expose its pid). */
function hermodPid(): number {
  const pid = processTree(process.pid).find((p) => p !== process.pid && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('bin/hermod.js'));
  if (pid === undefined) throw new Error('cannot find the hermod process among this process\'s children');
  return pid;
}

function createRssSampler(root: number | undefined) {
  let now = 0;
  let peak = 0;
  let phasePeak = 0;
  const sample = (): void => {
    if (root === undefined) return;
    now = processTree(root).reduce((sum, pid) => sum + rssBytes(pid), 0);
    peak = Math.max(peak, now);
    phasePeak = Math.max(phasePeak, now);
  };
  const timer = setInterval(sample, 250);
  return {
    enabled: root !== undefined,
    /** Starts a phase; returns a function giving the phase's peak so far. */
    phase(): () => number {
      sample();
      phasePeak = now;
      return () => (sample(), phasePeak);
    },
    now: () => now,
    peak: () => peak,
    stop: () => clearInterval(timer),
  };
}

// ---- the run ----

interface Row {
  phase: string;
  seconds: number;
  perSecond?: number;
  rssMb?: number;
  target: string;
  met?: boolean;
}

function every(ms: number, fn: () => void): () => void {
  const timer = setInterval(fn, ms);
  return () => clearInterval(timer);
}

async function startService(): Promise<{ service: Service; hermod?: HermodProcess; simulator?: SmscSimulator }> {
  const user = process.env.BENCH_USER ?? 'bench';
  const pass = process.env.BENCH_PASS ?? 'bench-secret';
  const auth = 'Basic ' + Buffer.from(`${user}:${pass}`).toString('base64');
  if (process.env.BENCH_URL) {
    // A service elsewhere may have a self-signed certificate: this is a benchmark, not a client to trust.
    return { service: { url: process.env.BENCH_URL, auth, app: user, agent: new https.Agent({ rejectUnauthorized: false }) } };
  }
  const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs });
  const { port } = await simulator.start();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-campaign-bench-'));
  const hermod = await startHermod({
    dataDir,
    env: {
      HERMOD_BOOTSTRAP_APP: user,
      HERMOD_BOOTSTRAP_PASSWORD: pass,
      HERMOD_SMSC_SIMULATOR: 'false',
      HERMOD_SMPP_PORT: String(port),
      HERMOD_SMSC_PORT: String(await freePort()),
      HERMOD_SMSC_RECEIPT_DELAY: `${receiptDelayMs}ms`,
      HERMOD_GATEWAYS: gateways,
    },
  });
  return { service: { url: hermod.baseUrl, auth, app: user, agent: new https.Agent({ ca: hermod.ca() }) }, hermod, simulator };
}

/** Waits for one submit_sm per member at the simulator, or (external service) for every report row to be past `queued`. */
async function waitAllSubmitted(s: Service, campaignId: number, simulator: SmscSimulator | undefined, rss: ReturnType<typeof createRssSampler>, from: number): Promise<{ done: boolean; reached: number }> {
  const deadline = from + timeoutS * 1000;
  let last = { at: from, count: 0 };
  const reached = async (): Promise<number> => {
    if (simulator) return simulator.submitCount;
    const { statuses } = await readReport(s, campaignId, { rows: 0 });
    return [...statuses].filter(([status]) => status !== 'accepted' && status !== 'queued').reduce((n, [, c]) => n + c, 0);
  };
  let count = 0;
  let lastPrint = from;
  while ((count = await reached()) < members) {
    const now = performance.now();
    if (now > deadline) return { done: false, reached: count };
    if (now - lastPrint >= PROGRESS_MS) {
      const rate = (count - last.count) / ((now - last.at) / 1000);
      console.log(`  fan-out: ${count} of ${members} submitted, ${Math.round(rate)}/s now, ${Math.round(count / ((now - from) / 1000))}/s overall${rss.enabled ? `, hermod RSS ${Math.round(rss.now() / MB)} MB` : ''}`);
      last = { at: now, count };
      lastPrint = now;
    }
    // Each poll of an external service reads the whole report: about once a second at most.
    await sleep(simulator ? 50 : 1000);
  }
  return { done: true, reached: count };
}

async function main(): Promise<void> {
  const { service: s, hermod, simulator } = await startService();
  const rss = createRssSampler(hermod ? hermodPid() : undefined);
  const rows: Row[] = [];
  const million = members === 1_000_000;
  const judge = (ok: boolean): boolean | undefined => (million ? ok : undefined);
  let failed = false;
  let intake: IntakeFigures | undefined;
  console.log(`campaign bench: ${members} members against ${s.url}${hermod ? ` (started here, ${gateways} gateway process(es), SMSC simulator in this process)` : ''}`);

  try {
    // 1. The list.
    const listProgress = { generated: 0 };
    const importPeak = rss.phase();
    let t = performance.now();
    let stopProgress = every(PROGRESS_MS, () => console.log(`  import: ${listProgress.generated} members sent, ${seconds(t).toFixed(0)} s${rss.enabled ? `, hermod RSS ${Math.round(rss.now() / MB)} MB` : ''}`));
    const listId = await postMembers(s, 'lists', { name: `bench-${Date.now()}` }, listProgress).finally(stopProgress);
    const importS = seconds(t);
    const importRss = importPeak();
    rows.push({ phase: 'import list (POST /lists, streamed body)', seconds: importS, perSecond: members / importS, rssMb: rss.enabled ? importRss / MB : undefined, target: '≤ 15 s, RSS ≤ 1536 MB', met: judge(importS <= 15 && (!rss.enabled || importRss <= 1536 * MB)) });
    console.log(`list ${listId}: ${importS.toFixed(2)} s`);

    // 2. The campaign, scheduled for now, to the same members.
    const campaignProgress = { generated: 0 };
    const schedulePeak = rss.phase();
    const scheduleStart = performance.now();
    stopProgress = every(PROGRESS_MS, () => console.log(`  schedule: ${campaignProgress.generated} members sent, ${seconds(scheduleStart).toFixed(0)} s`));
    const campaignId = await postMembers(s, 'scheduled_campaigns', { name: `bench-${Date.now()}`, schedule: new Date().toISOString(), content: 'Hi {{param1}}, your appointment is tomorrow at 10' }, campaignProgress).finally(stopProgress);
    const scheduleS = seconds(scheduleStart);
    rows.push({ phase: 'schedule campaign (POST /scheduled_campaigns, streamed body)', seconds: scheduleS, perSecond: members / scheduleS, rssMb: rss.enabled ? schedulePeak() / MB : undefined, target: 'part of schedule → all submitted' });
    console.log(`campaign ${campaignId}: ${scheduleS.toFixed(2)} s${simulator ? `; ${simulator.submitCount} submits already at the simulator` : ''}`);

    // 3. Fan-out until the simulator has every message.
    const fanoutPeak = rss.phase();
    t = performance.now();
    const fanout = await waitAllSubmitted(s, campaignId, simulator, rss, t);
    const fanoutS = seconds(t);
    const totalS = seconds(scheduleStart);
    if (!fanout.done) {
      failed = true;
      console.log(`TIMED OUT after ${timeoutS} s (BENCH_TIMEOUT): ${fanout.reached} of ${members} messages reached the SMSC simulator`);
    }
    const note = fanout.done ? '' : ` — TIMED OUT, ${fanout.reached} of ${members}`;
    const seen = simulator ? 'last submit_sm at the simulator' : 'every report row past queued, report polled';
    rows.push({ phase: `fan-out → all submitted (201 → ${seen})${note}`, seconds: fanoutS, perSecond: fanout.reached / fanoutS, rssMb: rss.enabled ? fanoutPeak() / MB : undefined, target: '' });
    rows.push({ phase: `schedule → all submitted (both lines above)${note}`, seconds: totalS, perSecond: fanout.reached / totalS, target: '≤ 120 s', met: judge(fanout.done && totalS <= 120) });

    // 4. The report, read as a stream.
    const reportProgress = { rows: 0 };
    const reportPeak = rss.phase();
    t = performance.now();
    stopProgress = every(PROGRESS_MS, () => console.log(`  report: ${reportProgress.rows} rows, ${seconds(t).toFixed(0)} s`));
    const report = await readReport(s, campaignId, reportProgress).finally(stopProgress);
    const reportS = seconds(t);
    rows.push({ phase: `report (GET …/report, streamed, ${report.rows} rows)`, seconds: reportS, perSecond: report.rows / reportS, rssMb: rss.enabled ? reportPeak() / MB : undefined, target: '≤ 10 s', met: judge(reportS <= 10 && report.rows === members) });
    console.log(`report: ${report.rows} rows in ${reportS.toFixed(2)} s; statuses ${JSON.stringify(Object.fromEntries(report.statuses))}`);
    if (report.rows !== members) {
      failed = true;
      console.log(`the report has ${report.rows} rows, expected ${members}`);
    }
    if (simulator && simulator.submitCount !== members) console.log(`note: the simulator counted ${simulator.submitCount} submit_sm for ${members} members`);
  } catch (err) {
    failed = true;
    console.error(err);
  } finally {
    rss.stop();
    if (hermod) await hermod.stop();
    await simulator?.stop();
    // A million-member run leaves a few hundred MB of history behind.
    if (hermod && !process.env.BENCH_KEEP_DATA) fs.rmSync(hermod.dataDir, { recursive: true, force: true });
  }

  // 5. The ceiling, with the service stopped so it does not compete for the cores.
  if (ceilingOptions.submits > 0) {
    intake = await measureSmscIntake(ceilingOptions);
    rows.push({ phase: `ceiling: simulator intake, raw submit_sm (${intake.submits} over ${intake.binds} bind(s), window ${intake.window})`, seconds: intake.seconds, perSecond: intake.rate, target: '' });
  }

  console.log(`\ncampaign at ${members} members, ${os.availableParallelism()} cores, node ${process.version}${hermod ? `, HERMOD_GATEWAYS=${gateways}` : ''}\n`);
  console.log('| phase | seconds | messages/s | peak hermod RSS MB | DESIGN.md §5 target | met |');
  console.log('|---|---:|---:|---:|---|---|');
  for (const r of rows) {
    const met = r.met === undefined ? (r.target.startsWith('≤') ? 'n/a' : '') : r.met ? 'yes' : 'no';
    console.log(`| ${r.phase} | ${r.seconds.toFixed(2)} | ${r.perSecond === undefined ? '' : Math.round(r.perSecond)} | ${r.rssMb === undefined ? '' : Math.round(r.rssMb)} | ${r.target} | ${met} |`);
  }
  if (rss.enabled) console.log(`\npeak RSS of the hermod process tree over the whole run: ${Math.round(rss.peak() / MB)} MB (this driver process, simulator included: ${Math.round(process.memoryUsage().rss / MB)} MB at the end)`);
  const fan = rows.find((r) => r.phase.startsWith('fan-out'));
  if (intake && fan?.perSecond) console.log(`hermod fan-out / simulator intake ceiling: ${(fan.perSecond / intake.rate).toFixed(2)}`);
  if (!million) console.log('targets are for 1,000,000 members; "n/a" at other sizes');
  if (failed) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
