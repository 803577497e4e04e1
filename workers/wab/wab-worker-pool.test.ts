import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../core/adapters/memory-bus';
import { createMemoryState } from '../../core/adapters/memory-state';
import { decodeStatus, encodeJob, type OutboundJob, type StatusUpdate } from '../../core/messages/bus-payloads';
import { topicName } from '../../core/ports/bus';
import { startWebhookReceiver } from '../simulators/http-simulator-support';
import { eventually, quietLog } from '../simulators/smpp-test-kit';
import { createWhatsAppSimulator } from '../simulators/whatsapp-simulator';
import { startWabWorkerPool } from './wab-worker-pool';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function wabPool() {
  const receiver = await startWebhookReceiver({ tls: false });
  cleanup.push(() => receiver.close());
  const sim = createWhatsAppSimulator({ token: 't', appSecret: 's', webhookUrl: receiver.url });
  await sim.start();
  cleanup.push(() => sim.stop());
  const bus = createMemoryBus();
  const state = createMemoryState();
  const config = { baseUrl: `http://127.0.0.1:${sim.port}`, token: 't', sender: '100000000000001', webhookSecret: 's', apiVersion: 'v21.0' };
  const pool = await startWabWorkerPool({ config, bus, state, log: quietLog });
  cleanup.push(async () => {
    await pool.stop();
    await bus.close();
    await state.close();
  });
  const updates: StatusUpdate[] = [];
  await bus.subscribe(topicName('status'), async (records) => void updates.push(...records.map((r) => decodeStatus(r.value))), { group: 'test-status' });
  return {
    sim,
    state,
    publish: (jobs: OutboundJob[]) => bus.publish(topicName('wab'), jobs.map((j) => ({ key: j.id, value: encodeJob(j) }))),
    statusesOf: (id: string) => updates.filter((u) => u.id === id),
  };
}

const job = (id: string, destination: string): OutboundJob => ({ id, applicationId: 'app', channel: 'wab', destination, source: '', content: 'Hi', acceptedAt: Date.now(), im: { type: 'text' } });

describe('WhatsApp worker pool', () => {
  it('takes a job from the wab topic, sends it and reports it submitted under the wamid', async () => {
    const { sim, state, publish, statusesOf } = await wabPool();
    await publish([job('wab-1', '+64211234561')]);
    const updates = await eventually(() => (statusesOf('wab-1').some((u) => u.status === 'submitted') ? statusesOf('wab-1') : undefined), 3000);
    const wamid = sim.received[0]!.id;
    expect(updates.map((u) => u.status)).toEqual(['sent', 'submitted']);
    expect(updates[1]).toMatchObject({ channel: 'wab', carrierId: wamid });
    expect(await state.getMessageIdByCarrierId(wamid)).toBe('wab-1');
  });

  it('reports a job the API refuses as rejected with the carrier error', async () => {
    const { publish, statusesOf } = await wabPool();
    await publish([job('wab-2', 'not-a-number')]);
    const updates = await eventually(() => (statusesOf('wab-2').length ? statusesOf('wab-2') : undefined), 3000);
    expect(updates).toEqual([expect.objectContaining({ status: 'rejected', errorCode: 'carrier_rejected' })]);
  });
});
