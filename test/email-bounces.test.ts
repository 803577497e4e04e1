import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermodWithChannels, type HermodWithChannels } from './support/hermod-with-channels';

describe('e-mail bounces through the SMTP sink and the bounce listener', () => {
  let h: HermodWithChannels;

  beforeAll(async () => {
    h = await startHermodWithChannels('bounces');
  }, 90_000);

  afterAll(() => h?.stop());

  const send = async (email: string, body: string): Promise<string> => {
    const r = await h.client.post('/rest/im/v1/message', {
      destination: { email },
      message: { type: 'text', text: { body } },
      delivery_attempts: [{ channel: 'email' }],
    });
    expect(r.status, r.text).toBe(202);
    return r.json.id as string;
  };
  const callbacksOf = (id: string) =>
    h.callbacks.filter((c) => c.body.id === id).map((c) => c.body as { status: string; channel?: string; attempt?: number; reason?: string });

  it('turns a received e-mail failed when the relay bounces it later, and tells the application why', async () => {
    const email = `tane+late-bounce.${randomUUID().slice(0, 8)}@example.org`;
    const id = await send(email, 'Kia ora, e hoa mā — tēnā koe 👋🏽 你好');

    const failed = await eventually(() => callbacksOf(id).find((c) => c.status === 'failed' && c.channel === undefined), 20_000, 50);
    expect(failed.reason).toContain('User unknown');
    const shown = callbacksOf(id).map((c) => `${c.status}${c.channel ? `@${c.channel}` : ''}`);
    // Delivered first (the relay's 250), then the bounce: on the attempt and on the message.
    expect(shown.indexOf('received')).toBeGreaterThanOrEqual(0);
    expect(shown.indexOf('received')).toBeLessThan(shown.indexOf('failed'));
    expect(shown).toContain('failed@email');
    const mail = h.smtp.mails.find((m) => m.to.includes(email));
    expect(mail?.from).toMatch(/^bounces\+.+@localhost$/);
  });

  it('leaves an e-mail that did not bounce received', async () => {
    const email = `ana.${randomUUID().slice(0, 8)}@example.org`;
    const id = await send(email, 'Tēnā koe — no bounce here 📬');
    await eventually(() => callbacksOf(id).find((c) => c.status === 'received' && c.channel === undefined), 20_000, 50);
    await new Promise((r) => setTimeout(r, 500));
    expect(callbacksOf(id).filter((c) => c.status === 'failed')).toEqual([]);
  });
});
