import { describe, expect, it } from 'vitest';
import { imJob } from '../carriers/http/http-carrier-test-kit';
import { channelPoolTestKit } from '../channel-pool-test-kit';
import { createRcsSimulator } from '../simulators/rcs-simulator';
import { startRcsWorkerPool } from './rcs-worker-pool';
import { rbmServiceAccount } from '../carriers/rcs/rbm-test-kit';
import { keptWarnings } from '../../lib/kept-warnings-test-kit';

const kit = channelPoolTestKit();

async function rcsPool() {
  const account = rbmServiceAccount();
  const sim = await kit.simulator((webhookUrl) => createRcsSimulator({ serviceAccount: account, clientToken: 's', webhookUrl }));
  account.pointAt(sim.port);
  const config = { baseUrl: `http://localhost:${sim.port}`, serviceAccount: account.file, sender: 'hermod-agent', webhookSecret: 's', apiVersion: '' };
  return { sim, ...(await kit.pool('rcs', (deps) => startRcsWorkerPool({ config, ...deps }))) };
}

const job = (destination: string) => imJob('rcs', destination, { type: 'text' });

describe('RCS worker pool', () => {
  it('takes a job from the rcs topic, sends it and reports it submitted under its own id', async () => {
    const { sim, state, publish, statusesOnce } = await rcsPool();
    const j = job('+64211234561');
    await publish([j]);
    const updates = await statusesOnce(j.id, 'submitted');
    expect(updates.map((u) => u.status)).toEqual(['sent', 'submitted']);
    expect(updates[1]).toMatchObject({ channel: 'rcs', carrierId: j.id });
    expect(sim.received).toHaveLength(1);
    expect(await state.getMessageIdByCarrierId(j.id)).toBe(j.id);
  });

  it('reports a job to a phone without RCS as rejected', async () => {
    const { publish, statusesOnce } = await rcsPool();
    const j = job('+64211234569');
    await publish([j]);
    expect(await statusesOnce(j.id)).toEqual([expect.objectContaining({ status: 'rejected', errorCode: 'carrier_rejected' })]);
  });

  it('says at start that without a service-account key every RCS attempt is rejected at once, and rejects one saying why', async () => {
    const { log, warnings } = keptWarnings();
    const config = { baseUrl: 'http://localhost:1', serviceAccount: '', sender: 'hermod-agent', webhookSecret: 's', apiVersion: '' };
    const { publish, statusesOnce } = await kit.pool('rcs', (deps) => startRcsWorkerPool({ config, ...deps, log }));
    expect(warnings.map((w) => w.msg)).toContain(
      'RCS has no service-account key (HERMOD_RCS_SERVICE_ACCOUNT): every RCS attempt is rejected at once, and Intelligent Messaging goes on to its next attempt',
    );
    const j = job('+64211234562');
    await publish([j]);
    expect(await statusesOnce(j.id)).toEqual([
      expect.objectContaining({ status: 'rejected', detail: expect.stringContaining('HERMOD_RCS_SERVICE_ACCOUNT is not set') }),
    ]);
  });
});
