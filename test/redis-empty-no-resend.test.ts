import { credentials } from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { CampaignControlClient, type CampaignProgress } from '../proto/gen/hermod/v1/campaign_control';
import { eventually } from './support/eventually';
import { startRedisDeployment } from './support/redis-deployment';
import type { createClient } from './support/https-client';

/**
 * The Redis bus and Redis hot state on one Redis, which comes back without its data while core is down. The SMS
 * worker had submitted messages and put their `submitted` on the status stream, which went with Redis: history still
 * shows them not yet with the carrier, and core hands them to the channel again at its start. The worker remembers
 * what it submitted (its data directory), so none reaches the SMSC twice.
 */
describe('a Redis that carries the bus and hot state and comes back empty after the SMS worker submitted what core never heard of', () => {
  const cleanup: (() => unknown)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await Promise.resolve(c()).catch(() => undefined);
  });

  const deployment = (dataDirPrefix: string) => startRedisDeployment({ receiptDelayMs: 200, dataDirPrefix, cleanup });

  it('sends none of them again: the worker reports them submitted, asks the SMSC, and each ends received', async () => {
    const d = await deployment('hermod-redis-no-resend-');
    const statusOf = async (client: ReturnType<typeof createClient>, id: string) => (await client.get(`/rest/sms/v2/messages?id=${id}`)).json?.status;

    // No SMS worker yet: the messages wait on the bus's stream for one.
    const core = await d.role(['core'], '"msg":"core listening"');
    const before = await d.gateway(core);
    // A long one in three parts (UCS-2 for its macrons): each part's carrier id is remembered and asked about.
    const texts = ['Kia ora, e hoa mā 👋🏽', '你好，世界 — 再见', 'Tēnā koutou katoa, ngā mihi nui ki a koutou — '.repeat(4), 'Ngā mihi — 🌿🎉'];
    const ids: string[] = [];
    for (const [i, content] of texts.entries()) {
      const r = await before.client.post('/rest/sms/v2/messages', { destination: `+642100055${i}`, content });
      expect(r.status, r.text).toBe(202);
      ids.push(r.json.id);
    }
    for (const id of ids) await eventually(async () => ((await statusOf(before.client, id)) === 'queued' ? true : undefined), 30_000, 50);

    // Core stops. The worker takes the jobs and submits them; their `submitted`, and their receipts, wait on the
    // status stream for a core to read them.
    before.client.close();
    await before.gateway.stop();
    await core.stop();
    const worker = await d.role(['worker', '--channel', 'sms'], '"msg":"channel worker started"');
    await eventually(() => (d.simulator.submitCount >= texts.length + 2 ? true : undefined), 30_000, 50);
    const submits = d.simulator.submitCount;
    expect(submits).toBe(texts.length + 2);
    await eventually(() => (d.simulator.receiptCount >= submits ? true : undefined), 30_000, 50);
    await new Promise((r) => setTimeout(r, 300));

    // Redis comes back empty, the status stream gone with it; core starts and hands every message to the worker again.
    await d.restartRedisEmpty();
    const again = await d.role(['core'], '"msg":"core listening"');
    const after = await d.gateway(again);
    for (const id of ids) await eventually(async () => ((await statusOf(after.client, id)) === 'received' ? true : undefined), 60_000, 200);
    // Not one of them sent again.
    expect(d.simulator.submitCount).toBe(submits);
    expect(worker.output()).toContain('a message this worker had already submitted was handed over again');
  }, 180_000);

  it('sends no member of a campaign twice when core was stopped as it handed the campaign to its channel (the trial)', async () => {
    const members = 200;
    const d = await deployment('hermod-redis-no-resend-campaign-');
    const byDestination = new Map<string, number>();
    d.simulator.on('message', (m: { destination: string }) => byDestination.set(m.destination, (byDestination.get(m.destination) ?? 0) + 1));
    const core = await d.role(['core'], '"msg":"core listening"');
    const worker = await d.role(['worker', '--channel', 'sms'], '"msg":"channel worker started"');
    const before = await d.gateway(core);
    const created = await before.client.post('/rest/campaign_manager/v1/acme/scheduled_campaigns', {
      name: 'Tātou katoa — 大家 🎉',
      schedule: new Date().toISOString(),
      content: 'Kia ora {{param1}} — 你好 👋🏽',
      members: Array.from({ length: members }, (_, n) => ({ destination: `+6424${String(n).padStart(6, '0')}`, param1: `Hine-${n}` })),
    });
    expect(created.status, created.text).toBe(201);
    await eventually(() => (core.output().includes('campaign handed to its channel') ? true : undefined), 60_000, 10);
    before.client.close();
    await before.gateway.stop();
    await core.stop();
    // Every member the core handed over reaches the SMSC, and their receipts the status stream, with no core to read them.
    await eventually(() => (d.simulator.receiptCount >= d.simulator.submitCount && d.simulator.submitCount > 0 ? true : undefined), 30_000, 50);
    await new Promise((r) => setTimeout(r, 500));
    const submits = d.simulator.submitCount;
    // The members core handed over before it stopped (all of them, as a rule): what the loss would send again.
    expect(submits).toBeGreaterThan(0);

    await d.restartRedisEmpty();
    const again = await d.role(['core'], '"msg":"core listening"');
    await eventually(() => (byDestination.size === members ? true : undefined), 60_000, 200);
    const grpc = new CampaignControlClient(again.ready.grpc, credentials.createInsecure());
    cleanup.push(() => grpc.close());
    const show = () =>
      new Promise<CampaignProgress>((resolve, reject) =>
        grpc.showCampaign({ application: 'acme', campaignId: String(created.json.id) }, (err, res) => (err ? reject(err) : resolve(res))),
      );
    const done = await eventually(async () => ((await show()).delivered === members ? show() : undefined), 60_000, 500);
    expect(done).toMatchObject({ submitted: members, remaining: 0 });
    // Each member once: those the worker had submitted were reported, not sent again.
    expect([...byDestination.values()].filter((n) => n > 1)).toEqual([]);
    expect(d.simulator.submitCount).toBe(members);
    expect(worker.output()).toContain('a message this worker had already submitted was handed over again');
  }, 180_000);
});
