import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermodWithChannels, type HermodWithChannels } from './support/hermod-with-channels';

/**
 * The MMS and WhatsApp simulators take a send to a number ending in 7 and
 * answer it only after hermod gave up waiting (30 s against a 2 s timeout):
 * the provider has the message, hermod does not know it.
 */
describe('no double sends when a provider takes a message and answers too late', () => {
  let h: HermodWithChannels;

  beforeAll(async () => {
    h = await startHermodWithChannels('no-double-sends', { env: { HERMOD_MMS_REQUEST_TIMEOUT: '2s', HERMOD_WAB_REQUEST_TIMEOUT: '2s' } });
  }, 90_000);

  afterAll(() => h?.stop());

  const send = async (body: Record<string, unknown>): Promise<string> => {
    const r = await h.client.post('/rest/im/v1/message', body);
    expect(r.status, r.text).toBe(202);
    return r.json.id as string;
  };
  const callbacksOf = (id: string) => h.callbacks.filter((c) => c.body.id === id).map((c) => c.body as { status: string; channel?: string; reason?: string });
  const mobileEndingIn7 = () => `+64211${String(Math.floor(Math.random() * 1e4)).padStart(4, '0')}7`;

  it('MMS: asks the provider by our id, finds the message and does not send it again', async () => {
    const mobile = mobileEndingIn7();
    const text = `Kia ora, e hoa mā — tēnā koe 👋🏽 ${randomUUID().slice(0, 8)}`;
    const id = await send({ destination: { mobile }, message: { type: 'text', text: { body: text } }, delivery_attempts: [{ channel: 'mms' }] });

    await eventually(() => callbacksOf(id).find((c) => c.status === 'received' && c.channel === undefined), 20_000, 50);
    await new Promise((r) => setTimeout(r, 1500)); // a retry would have come by now
    expect(h.mms.received.filter((m) => m.to === mobile)).toHaveLength(1);
  });

  it('WhatsApp: marks the attempt uncertain instead of resending, and falls back to SMS', async () => {
    const mobile = mobileEndingIn7();
    const id = await send({
      destination: { mobile },
      message: { type: 'text', text: { body: 'Kua tae mai tō pūkete 📦 你好' } },
      delivery_attempts: [{ channel: 'wab' }, { channel: 'sms' }],
    });

    const frozen = await eventually(() => callbacksOf(id).find((c) => c.status === 'frozen' && c.channel === 'wab'), 20_000, 50);
    expect(frozen.reason).toContain('not resent');
    await eventually(() => callbacksOf(id).find((c) => c.status === 'received' && c.channel === undefined), 20_000, 50);
    await new Promise((r) => setTimeout(r, 1500));
    expect(h.wab.received.filter((m) => m.to === mobile.slice(1))).toHaveLength(1);
  });

  it('WhatsApp: does not send again a message whose send had no answer when hermod stopped, after it starts again (trial)', async () => {
    const mobile = mobileEndingIn7();
    const id = await send({
      destination: { mobile },
      message: { type: 'text', text: { body: 'Kotahi anake — only once 🙏🏽 一次' } },
      delivery_attempts: [{ channel: 'wab' }, { channel: 'sms' }],
    });
    // Graph has it and has not answered yet: hermod is stopped as for a deploy, and started again.
    await eventually(() => h.wab.received.some((m) => m.to === mobile.slice(1)), 20_000, 20);
    await h.restart({ graceful: true });

    await eventually(() => callbacksOf(id).find((c) => c.status === 'frozen' && c.channel === 'wab'), 30_000, 50);
    await eventually(() => callbacksOf(id).find((c) => c.status === 'received' && c.channel === undefined), 30_000, 50);
    await new Promise((r) => setTimeout(r, 3_000)); // a second send would have come by now (2 s timeout)
    expect(h.wab.received.filter((m) => m.to === mobile.slice(1))).toHaveLength(1);
  }, 90_000);
});
