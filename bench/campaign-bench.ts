/**
 * Campaign benchmark (DESIGN.md §5, targets of issue 13): a list of BENCH_MEMBERS members imported
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
 * service's data directory, BENCH_NODE_ARGS are node's own arguments for every
 * hermod process (`--cpu-prof --cpu-prof-dir=/tmp/prof`, `--trace-gc`),
 * BENCH_REPORTS=n reads the report n times (default 1; the table shows the first,
 * the others are printed: the first read comes right after the fan-out, while
 * the engine still merges what it wrote), BENCH_GREP=text prints the service's output lines holding `text` at the end
 * (`BENCH_GREP=Mark-Compact` with `--trace-gc`). Any other HERMOD_* variable is passed to
 * the started service. With BENCH_URL there is no simulator to watch: the
 * fan-out is followed by polling the report, and RSS is not sampled.
 */
import fs from 'node:fs';
import os from 'node:os';
import { createCpuMeter } from './support/cpu-meter';
import { every } from './support/every';
import { hermodPid } from './support/hermod-pid';
import { postMembers } from './support/post-members';
import { printTable } from './support/print-table';
import { PROGRESS_MS } from './support/progress-ms';
import { readReport } from './support/read-report';
import { serviceMetrics } from './support/service-metrics';
import { createRssSampler, MB } from './support/rss-sampler';
import { startCampaignService } from './support/start-campaign-service';
import { waitAllSubmitted } from './support/wait-all-submitted';
import { waitForCount } from './support/wait-for-count';
import { measureSmscIntake, type IntakeFigures } from './smsc-intake-baseline';
import { exitOnSignal } from './support/exit-on-signal';

exitOnSignal();

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

const seconds = (fromMs: number): number => (performance.now() - fromMs) / 1000;

interface Row {
  phase: string;
  seconds: number;
  perSecond?: number;
  rssMb?: number;
  target: string;
  /** The figure issue 13 started from (1,000,000 members, this kind of machine). */
  baseline?: string;
  met?: boolean;
}

async function main(): Promise<void> {
  const user = process.env.BENCH_USER ?? 'bench';
  const pass = process.env.BENCH_PASS ?? 'bench-secret';
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean);
  const { service: s, hermod, simulator } = await startCampaignService({ url: process.env.BENCH_URL, user, pass, receiptDelayMs, gateways, nodeArgs });
  const pid = hermod ? hermodPid() : undefined;
  if (hermod && pid === undefined) throw new Error("cannot find the hermod process among this process's children");
  const rss = createRssSampler(pid);
  const rows: Row[] = [];
  const million = members === 1_000_000;
  const judge = (ok: boolean): boolean | undefined => (million ? ok : undefined);
  let failed = false;
  let intake: IntakeFigures | undefined;
  console.log(
    `campaign bench: ${members} members against ${s.url}${hermod ? ` (started here, ${gateways} gateway process(es), SMSC simulator in this process)` : ''}`,
  );

  try {
    // 1. The list.
    const listProgress = { generated: 0 };
    const importPeak = rss.phase();
    let t = performance.now();
    let stopProgress = every(PROGRESS_MS, () =>
      console.log(
        `  import: ${listProgress.generated} members sent, ${seconds(t).toFixed(0)} s${rss.enabled ? `, hermod RSS ${Math.round(rss.now() / MB)} MB` : ''}`,
      ),
    );
    const listId = await postMembers(s, 'lists', { name: `bench-${Date.now()}` }, members, listProgress).finally(stopProgress);
    const importS = seconds(t);
    const importRss = importPeak();
    rows.push({
      phase: 'import list (POST /lists, streamed body)',
      seconds: importS,
      perSecond: members / importS,
      rssMb: rss.enabled ? importRss / MB : undefined,
      target: '≤ 15 s, RSS ≤ 1536 MB',
      met: judge(importS <= 15 && (!rss.enabled || importRss <= 1536 * MB)),
    });
    console.log(`list ${listId}: ${importS.toFixed(2)} s`);

    // 2. The campaign, scheduled for now, to the same members.
    const campaignProgress = { generated: 0 };
    const schedulePeak = rss.phase();
    const scheduleStart = performance.now();
    stopProgress = every(PROGRESS_MS, () => console.log(`  schedule: ${campaignProgress.generated} members sent, ${seconds(scheduleStart).toFixed(0)} s`));
    const campaignId = await postMembers(
      s,
      'scheduled_campaigns',
      { name: `bench-${Date.now()}`, schedule: new Date().toISOString(), content: 'Hi {{param1}}, your appointment is tomorrow at 10' },
      members,
      campaignProgress,
    ).finally(stopProgress);
    const scheduleS = seconds(scheduleStart);
    rows.push({
      phase: 'schedule campaign (POST /scheduled_campaigns, streamed body)',
      seconds: scheduleS,
      perSecond: members / scheduleS,
      rssMb: rss.enabled ? schedulePeak() / MB : undefined,
      target: 'part of schedule → all submitted',
    });
    console.log(`campaign ${campaignId}: ${scheduleS.toFixed(2)} s${simulator ? `; ${simulator.submitCount} submits already at the simulator` : ''}`);

    // 3. Fan-out until the simulator has every message.
    const fanoutPeak = rss.phase();
    // CPU of each process over the fan-out: per message, a figure the machine's load moves much less than the time.
    const fanoutCpu = createCpuMeter(pid);
    fanoutCpu.start();
    t = performance.now();
    const fanout = await waitAllSubmitted(s, campaignId, simulator, rss, t, { members, timeoutS });
    const fanoutS = seconds(t);
    console.log(
      `fan-out: ${fanout.reached} messages in ${fanoutS.toFixed(2)} s (load average ${os.loadavg()[0]!.toFixed(1)}); CPU ms per message: ${fanoutCpu
        .stop()
        .filter((r) => r.label.startsWith('hermod ') || r.label.startsWith('this bench'))
        .map(
          (r) =>
            `${r.label.replace(' (load, receiver, SMSC simulator)', '')} ${(((r.percent / 100) * fanoutS * 1000) / Math.max(1, fanout.reached)).toFixed(3)}`,
        )
        .join(', ')}`,
    );
    const totalS = seconds(scheduleStart);
    if (!fanout.done) {
      failed = true;
      console.log(`TIMED OUT after ${timeoutS} s (BENCH_TIMEOUT): ${fanout.reached} of ${members} messages reached the SMSC simulator`);
    }
    const note = fanout.done ? '' : ` — TIMED OUT, ${fanout.reached} of ${members}`;
    const seen = simulator ? 'last submit_sm at the simulator' : 'every report row past queued, report polled';
    rows.push({
      phase: `fan-out → all submitted (201 → ${seen})${note}`,
      seconds: fanoutS,
      perSecond: fanout.reached / fanoutS,
      rssMb: rss.enabled ? fanoutPeak() / MB : undefined,
      target: '',
    });
    rows.push({
      phase: `schedule → all submitted (both lines above)${note}`,
      seconds: totalS,
      perSecond: fanout.reached / totalS,
      target: '≤ 45 s',
      baseline: '81.7 s',
      met: judge(fanout.done && totalS <= 45),
    });

    // 3b. The receipts' statuses: a campaign is done when every message is
    // recorded `received`, not when the last one was submitted. Waited for
    // before the report, so that the report is timed on its own rather than
    // beside the tail of the receipts it will show.
    if (hermod && fanout.done) {
      t = performance.now();
      const metricsUrl = `http://127.0.0.1:${hermod.metricsPort}/metrics`;
      const received = async (): Promise<number> =>
        (await serviceMetrics(metricsUrl, { n: 'hermod_core_messages_total{channel="sms",status="received"}' })).n || 0;
      const all = await waitForCount('received statuses recorded', received, members, { timeoutS: 120, settleMs: 0, pollMs: 50 });
      const receiptsS = seconds(t);
      console.log(`receipts: ${all.count} of ${members} messages recorded received ${receiptsS.toFixed(2)} s after the last submit`);
      rows.push({
        phase: `receipts → every status recorded (last submit_sm → ${all.count} received)`,
        seconds: receiptsS,
        target: '',
      });
    }

    // 4. The report, read as a stream.
    const reportProgress = { rows: 0 };
    const reportPeak = rss.phase();
    // CPU seconds each process spent on a report: a figure the machine's load moves much less than the time.
    const reportCpu = createCpuMeter(pid);
    const cpuSeconds = (wallS: number): string =>
      reportCpu
        .stop()
        .filter((r) => r.label.startsWith('hermod ') || r.label.startsWith('this bench'))
        .map((r) => `${r.label.replace(' (load, receiver, SMSC simulator)', '')} ${((r.percent / 100) * wallS).toFixed(2)}`)
        .join(', ');
    reportCpu.start();
    t = performance.now();
    stopProgress = every(PROGRESS_MS, () => console.log(`  report: ${reportProgress.rows} rows, ${seconds(t).toFixed(0)} s`));
    const report = await readReport(s, campaignId, reportProgress).finally(stopProgress);
    const reportS = seconds(t);
    rows.push({
      phase: `report (GET …/report, streamed, ${report.rows} rows)`,
      seconds: reportS,
      perSecond: report.rows / reportS,
      rssMb: rss.enabled ? reportPeak() / MB : undefined,
      target: '≤ 3 s',
      baseline: '7.1 s',
      met: judge(reportS <= 3 && report.rows === members),
    });
    console.log(
      `report: ${report.rows} rows in ${reportS.toFixed(2)} s (load average ${os.loadavg()[0]!.toFixed(1)}; CPU s: ${cpuSeconds(reportS)}); statuses ${JSON.stringify(Object.fromEntries(report.statuses))}`,
    );
    if (report.rows !== members) {
      failed = true;
      console.log(`the report has ${report.rows} rows, expected ${members}`);
    }
    for (let read = 2; read <= Number(process.env.BENCH_REPORTS ?? 1); read++) {
      reportCpu.start();
      t = performance.now();
      const again = await readReport(s, campaignId, { rows: 0 });
      const againS = seconds(t);
      console.log(
        `report read ${read}: ${again.rows} rows in ${againS.toFixed(2)} s (load average ${os.loadavg()[0]!.toFixed(1)}; CPU s: ${cpuSeconds(againS)})`,
      );
    }
    if (simulator && simulator.submitCount !== members) console.log(`note: the simulator counted ${simulator.submitCount} submit_sm for ${members} members`);
  } catch (err) {
    failed = true;
    console.error(err);
  } finally {
    rss.stop();
    if (hermod && process.env.BENCH_GREP)
      console.log(
        hermod
          .output()
          .split('\n')
          .filter((l) => l.includes(process.env.BENCH_GREP!))
          .join('\n'),
      );
    if (hermod) await hermod.stop();
    await simulator?.stop();
    // A million-member run leaves a few hundred MB of history behind.
    if (hermod && !process.env.BENCH_KEEP_DATA) fs.rmSync(hermod.dataDir, { recursive: true, force: true });
  }

  if (rss.enabled && hermod)
    rows.push({
      phase: 'peak RSS of the whole service (import, fan-out and report)',
      seconds: Number.NaN,
      rssMb: rss.peak() / MB,
      target: '≤ 1024 MB',
      baseline: '2,250 MB',
      met: judge(rss.peak() <= 1024 * MB),
    });

  // 5. The ceiling, with the service stopped so it does not compete for the cores.
  if (ceilingOptions.submits > 0) {
    intake = await measureSmscIntake(ceilingOptions);
    rows.push({
      phase: `ceiling: simulator intake, raw submit_sm (${intake.submits} over ${intake.binds} bind(s), window ${intake.window})`,
      seconds: intake.seconds,
      perSecond: intake.rate,
      target: '',
    });
  }

  console.log(
    `\ncampaign at ${members} members, ${os.availableParallelism()} cores, node ${process.version}${hermod ? `, HERMOD_GATEWAYS=${gateways}` : ''}\n`,
  );
  printTable(
    [
      { title: 'phase' },
      { title: 'seconds', align: 'right' },
      { title: 'messages/s', align: 'right' },
      { title: 'peak hermod RSS MB', align: 'right' },
      { title: 'target' },
      { title: 'issue 13 baseline' },
      { title: 'met' },
    ],
    rows.map((r) => {
      const met = r.met === undefined ? (r.target.startsWith('≤') ? 'n/a' : '') : r.met ? 'yes' : 'no';
      return [
        r.phase,
        Number.isNaN(r.seconds) ? '' : r.seconds.toFixed(2),
        r.perSecond === undefined ? '' : Math.round(r.perSecond),
        r.rssMb === undefined ? '' : Math.round(r.rssMb),
        r.target,
        r.baseline ?? '',
        met,
      ];
    }),
  );
  if (rss.enabled)
    console.log(
      `\npeak RSS of the hermod process tree over the whole run: ${Math.round(rss.peak() / MB)} MB (this driver process, simulator included: ${Math.round(process.memoryUsage().rss / MB)} MB at the end)`,
      `\neach process's own peak: ${[...rss.rolePeaks()].map(([role, bytes]) => `${role} ${Math.round(bytes / MB)} MB`).join(', ')}`,
    );
  const fan = rows.find((r) => r.phase.startsWith('fan-out'));
  if (intake && fan?.perSecond) console.log(`hermod fan-out / simulator intake ceiling: ${(fan.perSecond / intake.rate).toFixed(2)}`);
  if (!million) console.log('targets are for 1,000,000 members; "n/a" at other sizes');
  if (failed) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
