import { describe, expect, it } from 'vitest';
import { eventually } from '../../test/support/eventually';
import { imJob } from '../carriers/http/http-carrier-test-kit';
import { channelPoolTestKit } from '../channel-pool-test-kit';
import { createWhatsAppSimulator } from '../simulators/whatsapp-simulator';
import { startWabWorkerPool } from './wab-worker-pool';
import { carrierSends } from '../../lib/metrics';

const kit = channelPoolTestKit();

async function wabPool() {
  const sim = await kit.simulator((webhookUrl) => createWhatsAppSimulator({ token: 't', appSecret: 's', webhookUrl }));
  const config = { baseUrl: `http://localhost:${sim.port}`, token: 't', sender: '100000000000001', webhookSecret: 's', apiVersion: 'v21.0' };
  return { sim, ...(await kit.pool('wab', (deps) => startWabWorkerPool({ config, ...deps }))) };
}

const job = (destination: string) => imJob('wab', destination, { type: 'text' });

describe('WhatsApp worker pool', () => {
  it('takes a job from the wab topic, sends it and reports it submitted under the wamid', async () => {
    const { sim, state, publish, statusesOnce } = await wabPool();
    const j = job('+64211234561');
    await publish([j]);
    const updates = await statusesOnce(j.id, 'submitted');
    const wamid = sim.received[0]!.id;
    expect(updates.map((u) => u.status)).toEqual(['sent', 'submitted']);
    expect(updates[1]).toMatchObject({ channel: 'wab', carrierId: wamid });
    expect(await state.getMessageIdByCarrierId(wamid)).toBe(j.id);
  });

  it('reports a job the API refuses as rejected with the carrier error', async () => {
    const { publish, statusesOnce } = await wabPool();
    const j = job('not-a-number');
    await publish([j]);
    expect(await statusesOnce(j.id)).toEqual([expect.objectContaining({ status: 'rejected', errorCode: 'carrier_rejected' })]);
  });
});

describe('WhatsApp worker pool and cancelled jobs', () => {
  it('drops a job cancelled while it was queued, without sending or reporting it', async () => {
    const { sim, state, publish, statusesOf } = await wabPool();
    const cancelled = job('+64211234562');
    const kept = job('+64211234563');
    await state.cancelSends([cancelled.id]);
    await publish([cancelled, kept]);
    await eventually(() => (statusesOf(kept.id).some((u) => u.status === 'submitted') ? true : undefined), 5000, 20);
    expect(statusesOf(cancelled.id)).toEqual([]);
    expect(sim.received.map((m) => m.to)).toEqual(['64211234563']);
  });

  it('drops a job cancelled while it waited to retry a carrier that was down', async () => {
    const { sim, state, publish, statusesOf } = await wabPool();
    await sim.stop(); // refused connections: the worker backs off and retries
    const j = job('+64211234564');
    const retried = async (): Promise<number> =>
      (await carrierSends.get()).values.find((v) => v.labels.channel === 'wab' && v.labels.outcome === 'retried')?.value ?? 0;
    const before = await retried();
    await publish([j]);
    // The first try has failed (on a loaded machine that can take longer than any fixed wait).
    await eventually(async () => ((await retried()) > before ? true : undefined), 10_000, 10);
    await state.cancelSends([j.id]);
    await sim.start();
    await new Promise((r) => setTimeout(r, 3000)); // past the next retries (0.25..0.5 s, then 0.5..1 s, 1..2 s)
    expect(sim.received).toEqual([]);
    expect(statusesOf(j.id)).toEqual([]);
  });
});
