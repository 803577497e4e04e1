import { describe, expect, it } from 'vitest';
import { imJob } from '../carriers/http/http-carrier-test-kit';
import { channelPoolTestKit } from '../channel-pool-test-kit';
import { createMmsSimulator } from '../simulators/mms-simulator';
import { startMmsWorkerPool } from './mms-worker-pool';

const kit = channelPoolTestKit();

async function mmsPool() {
  const sim = await kit.simulator((webhookUrl) => createMmsSimulator({ token: 't', webhookSecret: 's', webhookUrl }));
  const config = { baseUrl: `http://localhost:${sim.port}`, token: 't', sender: '+15550000000', webhookSecret: 's', apiVersion: '' };
  return { sim, ...(await kit.pool('mms', (deps) => startMmsWorkerPool({ config, ...deps }))) };
}

const job = (destination: string) => imJob('mms', destination, { type: 'text' });

describe('MMS worker pool', () => {
  it('takes a job from the mms topic, sends it and reports it submitted under the provider id', async () => {
    const { sim, state, publish, statusesOnce } = await mmsPool();
    const j = job('+64211234561');
    await publish([j]);
    const updates = await statusesOnce(j.id, 'submitted');
    const id = sim.received[0]!.id;
    expect(updates.map((u) => u.status)).toEqual(['sent', 'submitted']);
    expect(updates[1]).toMatchObject({ channel: 'mms', carrierId: id });
    expect(await state.getMessageIdByCarrierId(id)).toBe(j.id);
  });

  it('reports a job the provider refuses as rejected', async () => {
    const { publish, statusesOnce } = await mmsPool();
    const j = job('not-a-number');
    await publish([j]);
    expect(await statusesOnce(j.id)).toEqual([expect.objectContaining({ status: 'rejected', errorCode: 'carrier_rejected' })]);
  });
});
