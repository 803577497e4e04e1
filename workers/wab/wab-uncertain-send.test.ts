import { describe, expect, it } from 'vitest';
import type { HttpCarrierConfig } from '../../lib/config';
import { eventually } from '../../test/support/eventually';
import { imJob } from '../carriers/http/http-carrier-test-kit';
import { channelPoolTestKit } from '../channel-pool-test-kit';
import { createWhatsAppSimulator } from '../simulators/whatsapp-simulator';
import { startWabWorkerPool } from './wab-worker-pool';

const kit = channelPoolTestKit();

/** A pool whose Cloud API stand-in takes a message to a number ending in 7, then answers after the send gave up. */
async function stallingPool(overrides: Partial<HttpCarrierConfig> = {}) {
  const sim = await kit.simulator((webhookUrl) => createWhatsAppSimulator({ token: 't', appSecret: 's', webhookUrl, lateAnswerMs: 8_000 }));
  const config: HttpCarrierConfig = {
    baseUrl: `http://localhost:${sim.port}`,
    token: 't',
    sender: '100000000000001',
    webhookSecret: 's',
    apiVersion: 'v21.0',
    requestTimeoutMs: 1500,
    ...overrides,
  };
  return { sim, ...(await kit.pool('wab', (deps) => startWabWorkerPool({ config, ...deps }))) };
}

const job = (destination: string) => imJob('wab', destination, { type: 'text' }, 'Kia ora, e hoa mā — tēnā koe 👋🏽');

describe('WhatsApp sends that time out after the Cloud API took them', () => {
  it('are not resent: the message is frozen as uncertain and the handset gets it once', async () => {
    const { sim, publish, statusesOnce, statusesOf } = await stallingPool();
    const j = job('+64211234567');
    await publish([j]);

    const updates = await statusesOnce(j.id, 'frozen', 8000);
    expect(updates.at(-1)).toMatchObject({ status: 'frozen', errorCode: 'uncertain', detail: expect.stringContaining('not resent') });
    await new Promise((r) => setTimeout(r, 1500)); // past where a retry would have sent again (0.25..0.5 s)
    expect(sim.received.filter((m) => m.to === '64211234567')).toHaveLength(1);
    expect(statusesOf(j.id).map((u) => u.status)).not.toContain('submitted');
  });

  it('are resent when the operator opted in to duplicates over silence (HERMOD_WAB_RESEND_UNCERTAIN)', async () => {
    const { sim, publish, statusesOf } = await stallingPool({ resendUncertain: true });
    const j = job('+64211234567');
    await publish([j]);
    await eventually(() => (sim.received.filter((m) => m.to === '64211234567').length >= 2 ? true : undefined), 8000, 20);
    expect(statusesOf(j.id).map((u) => u.status)).not.toContain('frozen');
  });
});
