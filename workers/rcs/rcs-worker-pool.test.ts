import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../core/adapters/memory-bus';
import { createMemoryState } from '../../core/adapters/memory-state';
import { decodeStatus, encodeJob, type OutboundJob, type StatusUpdate } from '../../core/messages/bus-payloads';
import { topicName } from '../../core/ports/bus';
import { startWebhookReceiver } from '../simulators/http-simulator-support';
import { eventually, quietLog } from '../simulators/smpp-test-kit';
import { createRcsSimulator } from '../simulators/rcs-simulator';
import { startRcsWorkerPool } from './rcs-worker-pool';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function rcsPool() {
  const receiver = await startWebhookReceiver({ tls: false });
  cleanup.push(() => receiver.close());
  const sim = createRcsSimulator({ token: 't', clientToken: 's', webhookUrl: receiver.url });
  await sim.start();
  cleanup.push(() => sim.stop());
  const bus = createMemoryBus();
  const state = createMemoryState();
  const config = { baseUrl: `http://127.0.0.1:${sim.port}`, token: 't', sender: 'hermod-agent', webhookSecret: 's', apiVersion: '' };
  const pool = await startRcsWorkerPool({ config, bus, state, log: quietLog });
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
    publish: (jobs: OutboundJob[]) => bus.publish(topicName('rcs'), jobs.map((j) => ({ key: j.id, value: encodeJob(j) }))),
    statusesOf: (id: string) => updates.filter((u) => u.id === id),
  };
}

const job = (id: string, destination: string): OutboundJob => ({ id, applicationId: 'app', channel: 'rcs', destination, source: '', content: 'Hi', acceptedAt: Date.now(), im: { type: 'text' } });

describe('RCS worker pool', () => {
  it('takes a job from the rcs topic, sends it and reports it submitted under its own id', async () => {
    const { sim, state, publish, statusesOf } = await rcsPool();
    await publish([job('rcs-1', '+64211234561')]);
    const updates = await eventually(() => (statusesOf('rcs-1').some((u) => u.status === 'submitted') ? statusesOf('rcs-1') : undefined), 3000);
    expect(updates.map((u) => u.status)).toEqual(['sent', 'submitted']);
    expect(updates[1]).toMatchObject({ channel: 'rcs', carrierId: 'rcs-1' });
    expect(sim.received).toHaveLength(1);
    expect(await state.getMessageIdByCarrierId('rcs-1')).toBe('rcs-1');
  });

  it('reports a job to a phone without RCS as rejected', async () => {
    const { publish, statusesOf } = await rcsPool();
    await publish([job('rcs-2', '+64211234569')]);
    const updates = await eventually(() => (statusesOf('rcs-2').length ? statusesOf('rcs-2') : undefined), 3000);
    expect(updates).toEqual([expect.objectContaining({ status: 'rejected', errorCode: 'carrier_rejected' })]);
  });
});
