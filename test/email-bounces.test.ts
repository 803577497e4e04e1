import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendBounce } from '../workers/simulators/sink-bounce';
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

  /** A bounce as anyone who reaches the listener can send one: to the return path `bounces+<id>@localhost`, guessed. */
  const forgeBounce = async (id: string): Promise<string> => {
    const port = h.bouncePort();
    expect(port).toBeDefined();
    return sendBounce({ from: `bounces+${id}@localhost`, headers: {} }, 'ana@example.org', { host: 'localhost', port: port! }).then(
      () => 'taken',
      (err: { responseCode?: number }) => `refused ${err.responseCode}`,
    );
  };
  const basic = { authorization: `Basic ${Buffer.from('acme:secret').toString('base64')}` };
  const v2Status = async (id: string): Promise<string> => (await h.client.get(`/rest/sms/v2/messages?id=${id}`, basic)).json.status as string;

  it('refuses a bounce to a return path hermod never gave out (an SMS’s id written into one), and the SMS stays received', async () => {
    const sms = await h.client.post('/rest/sms/v2/messages', { destination: '+64211234611', content: 'He karere SMS anake — kāore he īmēra 📵' }, basic);
    expect(sms.status, sms.text).toBe(202);
    const id = sms.json.id as string;
    await eventually(async () => ((await v2Status(id)) === 'received' ? true : undefined), 20_000, 50);

    expect(await forgeBounce(id)).toBe('refused 550');
    await new Promise((r) => setTimeout(r, 500));
    expect(await v2Status(id)).toBe('received');
    expect(h.callbacks.filter((c) => c.body.id === id && c.body.status === 'failed')).toEqual([]);
  });

  it('refuses a bounce to an e-mail’s return path without the tag hermod signed it with, and the e-mail stays received', async () => {
    const email = `mere.${randomUUID().slice(0, 8)}@example.org`;
    const id = await send(email, 'Kia ora Mere — he īmēra tūturu 📨');
    await eventually(() => callbacksOf(id).find((c) => c.status === 'received' && c.channel === undefined), 20_000, 50);
    const mail = h.smtp.mails.find((m) => m.to.includes(email));
    // The return path the mail went out with names the attempt, and more: what only hermod can write.
    expect(mail?.from).toMatch(/^bounces\+[0-9a-f-]{36}=[0-9a-f]{12}@localhost$/);
    const attempt = /^bounces\+([0-9a-f-]{36})=/.exec(mail!.from)![1]!;

    expect(await forgeBounce(attempt)).toBe('refused 550');
    await new Promise((r) => setTimeout(r, 500));
    expect(callbacksOf(id).filter((c) => c.status === 'failed')).toEqual([]);
  });
});
