import { credentials, type ServiceError, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { CampaignControlClient, type CampaignProgress } from '../proto/gen/hermod/v1/campaign_control';
import type { SmscSimulator } from '../workers/simulators/smsc-simulator';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import { startHermod } from './support/hermod-process';
import { createClient } from './support/https-client';

const CM = '/rest/campaign_manager/v1';
const MEMBERS = 6_000;

function members(count: number, prefix: string) {
  return Array.from({ length: count }, (_, n) => ({ destination: `+64${prefix}${String(n).padStart(6, '0')}`, param1: `Mere-${n} 👋🏽` }));
}

/** What reaches the carrier: submits per destination, and the address they came from. */
function watchSubmits(simulator: SmscSimulator) {
  const byDestination = new Map<string, number>();
  let source = '';
  simulator.on('message', (m: { source: string; destination: string }) => {
    const to = m.destination.replace(/^\+/, '');
    byDestination.set(to, (byDestination.get(to) ?? 0) + 1);
    source = m.source;
  });
  return { byDestination, total: () => [...byDestination.values()].reduce((a, n) => a + n, 0), source: () => source };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `hermod campaigns <verb> acme <id>` as an operator types it; the JSON it prints. */
async function campaigns(h: HermodWithSimulator['hermod'], ...args: string[]): Promise<CampaignShown> {
  const r = await h.cli(['campaigns', ...args]);
  expect(r.code, r.output).toBe(0);
  return JSON.parse(r.output) as CampaignShown;
}

type CampaignShown = Omit<CampaignProgress, 'created' | 'schedule'> & { created: string; schedule: string };

interface ReportRow {
  mobile: string;
  status: string;
  sent_date: string;
}

async function scheduleCampaign(h: HermodWithSimulator, name: string, prefix: string): Promise<string> {
  const created = await h.client.post(`${CM}/acme/scheduled_campaigns`, {
    name,
    schedule: new Date().toISOString(),
    content: 'Kia ora {{param1}} — tēnā koe, 你好 🎉',
    members: members(MEMBERS, prefix),
  });
  expect(created.status, created.text).toBe(201);
  return String(created.json.id);
}

async function loadAverage(): Promise<string> {
  const os = await import('node:os');
  return os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
}

describe('campaign control', () => {
  it('pauses a 6,000-member campaign within a second, keeps it paused across a kill -9, and resumed it reaches every member exactly once, but those who opted out or were blocked while it waited', async () => {
    // A slow carrier: a window of 8 answered after 40 ms, so the campaign runs long enough to be paused.
    let h = await startHermodWithSimulator('campaign-pause', { HERMOD_SMPP_WINDOW: '8', HERMOD_CAMPAIGN_PARTITION: '1000' }, { submitRespDelayMs: 40 });
    const simulator = h.simulator;
    const submits = watchSubmits(simulator);
    try {
      const id = await scheduleCampaign(h, 'Te hoko nui — 大促销', '27');
      await eventually(async () => (submits.byDestination.size >= 500 ? true : undefined), 60_000, 20);

      const paused = await campaigns(h.hermod, 'pause', 'acme', id);
      expect(paused).toMatchObject({ application: 'acme', campaignId: id, name: 'Te hoko nui — 大促销', state: 'paused', members: MEMBERS });
      await sleep(1000);
      const atOneSecond = submits.total();
      await sleep(3000);
      console.log(`pause: ${atOneSecond} submits 1 s after pause, ${submits.total()} 3 s later (load ${await loadAverage()})`);
      expect(submits.total()).toBe(atOneSecond);
      expect(atOneSecond).toBeLessThan(MEMBERS);

      // kill -9 of every process, then a start on the same data directory: still paused, still nothing sent. The
      // carrier need not be slow any more (its window was only to pause mid-run): the rest goes out quickly once resumed.
      await h.hermod.kill9();
      h.client.close();
      const hermod = await startHermod({ dataDir: h.hermod.dataDir, env: { ...restartEnv(simulator), HERMOD_SMPP_WINDOW: '256' } });
      h = { ...h, hermod, client: createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' }) };
      await sleep(3000);
      expect(submits.total()).toBe(atOneSecond);
      const afterRestart = await campaigns(h.hermod, 'show', 'acme', id);
      expect(afterRestart.state).toBe('paused');
      expect(afterRestart.remaining).toBe(MEMBERS - afterRestart.submitted);

      // While it waits, a member whose message the workers hold (parked, `queued` in the report) replies STOP, and an
      // operator blocks another's number: neither gets the message when it resumes, however long it was held.
      const parked = await eventually(
        async () => {
          const r = await h.client.get(`${CM}/acme/${id}/report`);
          const queued = (r.json as ReportRow[]).filter((row) => row.status === 'queued').map((row) => row.mobile.replace(/^\+/, ''));
          return queued.length >= 2 ? queued : undefined;
        },
        30_000,
        250,
      );
      const [stopping, blocking] = [parked[0]!, parked[parked.length - 1]!];
      await simulator.originate({ source: `+${stopping}`, destination: submits.source(), text: 'Stop!' });
      await eventually(async () => ((await h.hermod.cli(['optouts', 'list', 'acme'])).output.includes(stopping) ? true : undefined), 20_000, 200);
      expect((await h.hermod.cli(['blocklist', 'add', '--app', 'acme', `+${blocking}`])).code).toBe(0);
      await sleep(1500); // every core and worker reads the block list within a second

      const resumed = await campaigns(h.hermod, 'resume', 'acme', id);
      expect(resumed.state).toBe('running');
      await eventually(async () => (submits.byDestination.size >= MEMBERS - 2 ? true : undefined), 240_000, 250);
      await sleep(2000); // anything sent twice, or to the two, arrives meanwhile
      expect(submits.total()).toBe(MEMBERS - 2);
      expect(submits.byDestination.has(stopping)).toBe(false);
      expect(submits.byDestination.has(blocking)).toBe(false);

      const done = await eventually(
        async () => {
          const shown = await campaigns(h.hermod, 'show', 'acme', id);
          return shown.delivered === MEMBERS - 2 && shown.blocked === 2 ? shown : undefined;
        },
        60_000,
        500,
      );
      expect(done).toMatchObject({ state: 'finished', submitted: MEMBERS - 2, delivered: MEMBERS - 2, blocked: 2, dead: 0, remaining: 0 });
      const report = (await h.client.get(`${CM}/acme/${id}/report`)).json as ReportRow[];
      expect(report.filter((row) => row.status === 'blocked').map((row) => row.mobile.replace(/^\+/, ''))).toEqual([stopping, blocking]);
      const listed = await h.hermod.cli(['campaigns', 'list', 'acme']);
      // submitted, delivered, failed, blocked, deficient, dead, remaining: every count `show` has.
      expect(listed.output).toMatch(
        new RegExp(`^acme\\t${id}\\tTe hoko nui — 大促销\\tfinished\\t${MEMBERS}\\t${MEMBERS - 2}\\t${MEMBERS - 2}\\t0\\t2\\t0\\t0\\t0$`, 'm'),
      );
      expect(listed.output.split('\n')[0]).toBe('application\tid\tname\tstate\tmembers\tsubmitted\tdelivered\tfailed\tblocked\tdeficient\tdead\tremaining');
      // Nothing is left to stop or to go on with: a finished campaign is neither paused, resumed nor cancelled.
      for (const verb of ['pause', 'resume', 'cancel']) {
        const refused = await h.hermod.cli(['campaigns', verb, 'acme', id]);
        expect(refused.code).toBe(1);
        expect(refused.output).toMatch(/^error: campaign \d+ has finished: every member was handed to a carrier/);
      }
      expect((await campaigns(h.hermod, 'show', 'acme', id)).state).toBe('finished');
    } finally {
      h.client.close();
      await h.hermod.stop();
      await simulator.stop();
    }
  }, 420_000);

  it('cancels a running campaign: the report counts every member exactly once, as sent or dead, and campaigns show agrees with it', async () => {
    const h = await startHermodWithSimulator('campaign-cancel', { HERMOD_SMPP_WINDOW: '8', HERMOD_CAMPAIGN_PARTITION: '1000' }, { submitRespDelayMs: 40 });
    const submits = watchSubmits(h.simulator);
    const grpc = new CampaignControlClient(h.hermod.coreAddress, credentials.createInsecure());
    try {
      const id = await scheduleCampaign(h, 'Whakakorea — отменить', '28');
      await eventually(async () => (submits.byDestination.size >= 500 ? true : undefined), 60_000, 20);
      const cancelled = await campaigns(h.hermod, 'cancel', 'acme', id);
      // Every member counted once in the answer: those not yet ended dead are still `remaining` (a trial's cancel
      // answered 2,000 submitted, 8,000 dead and 0 remaining of 20,000 members).
      expect(cancelled.state).toBe('cancelled');
      expect(cancelled.submitted + cancelled.dead + cancelled.remaining, JSON.stringify(cancelled)).toBe(MEMBERS);
      await sleep(1000);
      const atOneSecond = submits.total();
      await sleep(2000);
      expect(submits.total()).toBe(atOneSecond);

      const report = await eventually(
        async () => {
          const r = await h.client.get(`${CM}/acme/${id}/report`);
          const rows = r.json as ReportRow[];
          return r.status === 200 && rows.length === MEMBERS && rows.every((x) => x.status === 'dead' || x.status === 'received') ? rows : undefined;
        },
        120_000,
        500,
      );
      const dead = report.filter((r) => r.status === 'dead');
      const sent = report.filter((r) => r.status !== 'dead');
      expect(new Set(report.map((r) => r.mobile)).size).toBe(MEMBERS);
      expect(sent.every((r) => r.sent_date !== '')).toBe(true);
      expect(dead.every((r) => r.sent_date === '')).toBe(true);
      // What was sent is exactly what reached the carrier, once each.
      expect(sent.length).toBe(submits.byDestination.size);
      expect(submits.total()).toBe(submits.byDestination.size);
      expect(dead.length).toBeGreaterThan(0);

      const shown = await campaigns(h.hermod, 'show', 'acme', id);
      console.log(`cancel: ${sent.length} sent, ${dead.length} dead of ${MEMBERS} (load ${await loadAverage()})`);
      expect(shown).toMatchObject({ state: 'cancelled', members: MEMBERS, submitted: sent.length, delivered: sent.length, dead: dead.length, remaining: 0 });
      // In the order README shows, the counts as the list's columns run.
      expect(Object.keys(shown)).toEqual([
        'application',
        'campaignId',
        'name',
        'state',
        'members',
        'created',
        'schedule',
        'submitted',
        'delivered',
        'failed',
        'blocked',
        'deficient',
        'dead',
        'remaining',
        'currentRate',
        'secondsLeft',
      ]);

      // A cancelled campaign does not come back; unknown ones are named as such.
      const resume = await h.hermod.cli(['campaigns', 'resume', 'acme', id]);
      expect(resume.code).toBe(1);
      expect(resume.output).toMatch(/^error: campaign \d+ was cancelled: it cannot be resumed/);
      const code = (call: (cb: (err: ServiceError | null) => void) => void) => new Promise<number | undefined>((r) => call((err) => r(err?.code)));
      expect(await code((cb) => grpc.resumeCampaign({ application: 'acme', campaignId: id }, cb))).toBe(status.FAILED_PRECONDITION);
      expect(await code((cb) => grpc.showCampaign({ application: 'acme', campaignId: '999999' }, cb))).toBe(status.NOT_FOUND);
      expect(await code((cb) => grpc.pauseCampaign({ application: 'nobody-here', campaignId: id }, cb))).toBe(status.NOT_FOUND);
      const unknown = await h.hermod.cli(['campaigns', 'show', 'acme', '999999']);
      expect(unknown).toMatchObject({ code: 1 });
      expect(unknown.output).toMatch(/^error: application acme has no campaign "999999"/);
      const noApp = await h.hermod.cli(['campaigns', 'pause', 'kāore-he-taupānga', id]);
      expect(noApp.output).toMatch(/^error: no application named kāore-he-taupānga/);
    } finally {
      grpc.close();
      await h.stop();
    }
  }, 300_000);

  it('pauses a campaign before its time: its time passes with nothing sent, a kill -9 keeps it paused, and resumed everyone gets one message', async () => {
    let h = await startHermodWithSimulator('campaign-early-pause');
    const simulator = h.simulator;
    const submits = watchSubmits(simulator);
    try {
      // Far enough ahead for the pause to come first on a busy machine: creating the campaign and pausing it took
      // 0.6 s alone, 1.3 s beside two processes spinning on the two cores (2026-12-03).
      const schedule = Date.now() + 8_000;
      const created = await h.client.post(`${CM}/acme/scheduled_campaigns`, {
        name: 'Āpōpō — 明天',
        schedule: new Date(schedule).toISOString(),
        content: 'Kia ora {{param1}} — 你好 👋🏽',
        members: members(50, '26'),
      });
      expect(created.status, created.text).toBe(201);
      const id = String(created.json.id);
      expect((await campaigns(h.hermod, 'pause', 'acme', id)).state).toBe('paused');
      await sleep(Math.max(0, schedule - Date.now()) + 3000);
      expect(submits.total()).toBe(0);
      expect((await campaigns(h.hermod, 'show', 'acme', id)).state).toBe('paused');

      await h.hermod.kill9();
      h.client.close();
      const hermod = await startHermod({ dataDir: h.hermod.dataDir, env: { ...restartEnv(simulator), HERMOD_SMPP_WINDOW: '256' } });
      h = { ...h, hermod, client: createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' }) };
      await sleep(2000);
      expect(submits.total()).toBe(0);
      expect((await campaigns(h.hermod, 'show', 'acme', id)).state).toBe('paused');

      expect((await campaigns(h.hermod, 'resume', 'acme', id)).state).toBe('running');
      await eventually(async () => (submits.byDestination.size === 50 ? true : undefined), 60_000, 100);
      await sleep(1000);
      expect(submits.total()).toBe(50);
    } finally {
      h.client.close();
      await h.hermod.stop();
      await simulator.stop();
    }
  }, 180_000);

  it('dry-runs a campaign: nothing is sent, members are measured after placeholders, each dropped member says why, and the send then does what it said', async () => {
    const h = await startHermodWithSimulator('campaign-dry-run');
    const submits = watchSubmits(h.simulator);
    let parts = 0;
    h.simulator.on('submit', () => parts++);
    try {
      expect((await h.hermod.cli(['blocklist', 'add', '--app', 'acme', '+6429'])).code).toBe(0);
      const members = [
        { destination: '+64211000001', param1: 'Ana' },
        { destination: '+64211000002', param1: 'Ānaru' },
        { destination: '+64211000003', param1: 'x'.repeat(50) },
        { destination: '+64211000004' },
        { destination: '+64291000005', param1: 'Hemi' },
        // Decomposed (NFD), as a CRM exports it: é as e and U+0301.
        { destination: '+64211000006', param1: 'Rene\u0301e' },
      ];
      const list = await h.client.post(`${CM}/acme/lists`, { name: 'whakamātau — 试运行', members });
      expect(list.status, list.text).toBe(201);
      const listId = String(list.json.id);
      // 136 characters around the name.
      const content = `Kia ora {{param1}}, ${'hoko nui '.repeat(14)}`;
      const r = await h.hermod.cli(['campaigns', 'dry-run', 'acme', listId, '--content', content]);
      expect(r.code, r.output).toBe(0);
      const result = JSON.parse(r.output);
      expect(result).toMatchObject({
        members: 6,
        sendable: 5,
        droppedTotal: 1,
        droppedByReason: { blocked: 1 },
        warnedTotal: 1,
        ratePerSecond: 100,
      });
      // 'Ana' (139 characters), no name at all (136) and Renée (141, measured composed: é is GSM's) fit one GSM-7
      // SMS; 50 x's (186) take two parts of 153; the macron of Ānaru makes 141 UCS-2 characters, three parts of 67.
      expect(result.segments).toEqual([
        { encoding: 'GSM-7', segments: 1, members: 3 },
        { encoding: 'GSM-7', segments: 2, members: 1 },
        { encoding: 'UCS-2', segments: 3, members: 1 },
      ]);
      expect(result.segmentsTotal).toBe(8);
      expect(result.estimatedSeconds).toBeCloseTo(0.08);
      expect(result.dropped).toEqual([{ destination: '+64291000005', reason: 'blocked' }]);
      // Sent, with the name left out, as the campaign will send it.
      expect(result.warned).toEqual([{ destination: '+64211000004', reason: 'missing_parameter' }]);
      const both = await h.hermod.cli(['campaigns', 'dry-run', 'acme', listId]);
      expect(both).toMatchObject({ code: 2 });
      expect(both.output).toMatch(/^error: give exactly one of --content <text> and --template <name>/);
      // Content a campaign could never send is refused as the campaign would be, not measured as sendable.
      const tooLong = await h.hermod.cli(['campaigns', 'dry-run', 'acme', listId, '--content', 'Kia ora e hoa mā 👋🏽 '.repeat(100)]);
      expect(tooLong.code).toBe(1);
      expect(tooLong.output).toMatch(/^error: content: must NOT have more than 1600 characters/);
      const noList = await h.hermod.cli(['campaigns', 'dry-run', 'acme', '12345', '--template', 'kāore']);
      expect(noList.output).toMatch(/^error: application acme has no template "kāore"/);
      await sleep(500);
      expect(submits.total()).toBe(0);

      // The campaign of the same members sends what the dry run said it would.
      const sent = await h.client.post(`${CM}/acme/scheduled_campaigns`, {
        name: 'whakamātau — 试运行',
        schedule: new Date(Date.now() - 1000).toISOString().replace('Z', '+00:00'),
        content,
        members,
      });
      expect(sent.status, sent.text).toBe(201);
      await eventually(() => submits.total() === result.sendable, 30_000);
      await sleep(500);
      expect(submits.total()).toBe(result.sendable);
      // Every SMS the dry run counted, and no more, was submitted.
      expect(parts).toBe(result.segmentsTotal);
      expect(submits.byDestination.get('64211000004')).toBe(1);
      expect(submits.byDestination.has('64291000005')).toBe(false);
    } finally {
      await h.stop();
    }
  }, 120_000);
});

/** The environment of the first start, bound to the same simulator. */
function restartEnv(simulator: SmscSimulator): Record<string, string> {
  return {
    HERMOD_SMSC_SIMULATOR: 'false',
    HERMOD_SMPP_PORT: String(simulator.port),
    HERMOD_GATEWAYS: '1',
    HERMOD_SMPP_WINDOW: '8',
    HERMOD_CAMPAIGN_PARTITION: '1000',
  };
}
