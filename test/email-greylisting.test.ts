import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermodWithChannels, type HermodWithChannels } from './support/hermod-with-channels';
import { seriesSum } from './support/metric-samples';

// A greylisting server refuses a new sender and recipient for minutes (postgrey: 5); here for 6 s: longer than the
// worker's own 4 tries in its batch (some 1.75–3.5 s), so only a deferral (the first wait 1 s here) gets it through.
const GREYLIST_MS = 6_000;

describe('e-mail to a greylisting server', () => {
  let h: HermodWithChannels;

  beforeAll(async () => {
    h = await startHermodWithChannels('greylisting', {
      smtp: { greylistMs: GREYLIST_MS },
      env: { HERMOD_SEND_RETRY_FIRST: '1s', HERMOD_SEND_RETRY_LONGEST: '2s', HERMOD_SEND_RETRY_FOR: '1h' },
    });
  }, 90_000);

  afterAll(() => h?.stop());

  const callbacksOf = (id: string) =>
    h.callbacks.filter((c) => c.body.id === id).map((c) => c.body as { status: string; channel?: string; attempt?: number; reason?: string });

  it('is delivered once the greylisting has passed, not frozen after the tries of its batch, and sent once', async () => {
    const email = `hemi+greylist.${randomUUID().slice(0, 8)}@kōrero.example`;
    const sentAt = Date.now();
    const r = await h.client.post('/rest/im/v1/message', {
      destination: { email },
      message: { type: 'text', text: { body: 'Kia ora e Hemi — he reta tēnei 📨 你好' } },
      delivery_attempts: [{ channel: 'email', timeout: 600 }, { channel: 'sms' }],
    });
    expect(r.status, r.text).toBe(202);
    const id = r.json.id as string;

    const received = await eventually(() => callbacksOf(id).find((c) => c.status === 'received' && c.channel === undefined), 40_000, 100);
    expect(received).toBeDefined();
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(GREYLIST_MS);
    const shown = callbacksOf(id).map((c) => `${c.status}${c.channel ? `@${c.channel}` : ''}`);
    expect(shown).not.toContain('frozen@email');
    expect(shown.some((s) => s.endsWith('@sms'))).toBe(false);
    expect(h.smtp.mails.filter((m) => m.to.includes(email)).map((m) => m.text.trim())).toEqual(['Kia ora e Hemi — he reta tēnei 📨 你好']);
    // Given back to core and tried again later, not held in its batch until the greylisting passed.
    const metrics = await (await fetch(`http://127.0.0.1:${h.hermod.metricsPort}/metrics`)).text();
    expect(seriesSum(metrics, 'hermod_carrier_sends_total{channel="email",outcome="deferred"}')).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
