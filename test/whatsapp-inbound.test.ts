import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermodWithChannels, type HermodWithChannels } from './support/hermod-with-channels';

/**
 * WhatsApp replies: handsets' messages in the Cloud API webhook become
 * replies (MO) of the application that owns the WhatsApp number, reach its
 * reply callback once each however often WhatsApp redelivers them, opt the
 * handset out on STOP, and count as `read` for an attempt waiting on one.
 */
const KIA_ORA = 'Kia ora, e hoa mā — tēnā koe 👋🏽 你好';
/** The simulator's business number, as its webhooks give it (digits, no plus). */
const BUSINESS = '15550000001';

describe('WhatsApp replies (MO)', () => {
  let h: HermodWithChannels;

  beforeAll(async () => {
    h = await startHermodWithChannels('wab-inbound', { env: { HERMOD_IM_DEFAULT_TIMEOUT: '30s' } });
    const reply = await h.hermod.cli(['apps', 'set-callbacks', 'acme', '--reply', `${h.receiverUrl}/reply`]);
    expect(reply.code, reply.output).toBe(0);
    // The owner of the WhatsApp number: its replies are acme's.
    const claim = await h.hermod.cli(['apps', 'set-sources', 'acme', `+${BUSINESS}`]);
    expect(claim.code, claim.output).toBe(0);
  }, 120_000);

  afterAll(() => h?.stop());

  const replies = (handset: string) => h.callbacks.filter((c) => c.body.source === handset && typeof c.body.content === 'string').map((c) => c.body);
  const sendIm = async (mobile: string, attempts: unknown[]): Promise<string> => {
    const r = await h.client.post('/rest/im/v1/message', {
      destination: { mobile },
      message: { type: 'text', text: { body: KIA_ORA } },
      delivery_attempts: attempts,
    });
    expect(r.status, r.text).toBe(202);
    return r.json.id as string;
  };
  const imCallbacks = (id: string) => h.callbacks.filter((c) => c.body.id === id).map((c) => c.body as { status: string; channel?: string; attempt?: number });
  /** Core's log lines of `msg` about the reply from `mobile`, once there are any: they come through core's output pipe, which may trail a callback. */
  const logged = (msg: string, mobile: string, timeoutMs = 10_000): Promise<string[]> =>
    eventually(() => {
      const lines = h.hermod
        .output()
        .split('\n')
        .filter((l) => l.includes(`"msg":"${msg}"`) && l.includes(`"source":"${mobile}"`));
      return lines.length > 0 ? lines : undefined;
    }, timeoutMs);

  it('settles a WhatsApp attempt waiting for read when the handset replies, without the SMS fallback, and hands the reply to the owner', async () => {
    const mobile = '+6421600010'; // delivered, never a read receipt
    const id = await sendIm(mobile, [{ first: { channel: 'wab', event: 'read', timeout: 30 } }, { last: { channel: 'sms' } }]);
    await eventually(() => imCallbacks(id).find((c) => c.channel === 'wab' && c.status === 'received'), 20_000, 50);
    const sent = h.wab.received.find((m) => m.to === '6421600010')!;
    await h.wab.handsetSends('6421600010', { text: KIA_ORA }, { context: sent.id });

    const outcome = await eventually(() => imCallbacks(id).find((c) => c.channel === undefined && c.status !== 'accepted'), 20_000, 50);
    expect(outcome.status).toBe('read');
    const [reply] = await eventually(() => (replies(mobile).length > 0 ? replies(mobile) : undefined), 20_000, 50);
    expect(reply).toMatchObject({ content: KIA_ORA, source: mobile, destination: `+${BUSINESS}` });
    expect(reply.reply_to).toBe(id); // the id the client was given, not its WhatsApp attempt's
    await new Promise((r) => setTimeout(r, 500));
    expect(imCallbacks(id).filter((c) => c.channel === 'sms')).toEqual([]);
  });

  it('takes a tapped reply button as its title and a photo as its media reference and caption', async () => {
    const mobile = '+6421600021';
    await h.wab.handsetSends('6421600021', { button: { id: 'rsvp-yes', title: 'Āe, ka tae atu au ✅' } });
    await h.wab.handsetSends('6421600021', { media: { type: 'image', id: '1234567890123', mimeType: 'image/jpeg', caption: 'Tirohia tēnei 📷' } });
    const got = await eventually(() => (replies(mobile).length >= 2 ? replies(mobile) : undefined), 20_000, 50);
    expect(got.map((r) => r.content).sort()).toEqual(['[image 1234567890123 image/jpeg] Tirohia tēnei 📷', 'Āe, ka tae atu au ✅'].sort());
  });

  // End to end: the webhook parser puts U+FFFD in (lib/carrier-webhooks/whatsapp-inbound.property.test.ts pins it),
  // and gRPC's UTF-8 between gateway and core would too; this holds what the application and history show.
  it('keeps a text with half an emoji (a lone surrogate, JSON "\\ud83d") as U+FFFD in its place, in the reply callback and in history, its whole emoji and macrons as they came', async () => {
    const mobile = '+6421600104';
    await h.wab.handsetSends('6421600104', { text: 'Tēnā koe \ud83d — ka kite 👋🏽' });
    const [reply] = await eventually(() => (replies(mobile).length > 0 ? replies(mobile) : undefined), 20_000, 50);
    expect(reply.content).toBe('Tēnā koe \ufffd — ka kite 👋🏽');
    const stored = await h.client.get(`/rest/sms/v2/messages?id=${reply.id}`, { authorization: `Basic ${Buffer.from('acme:secret').toString('base64')}` });
    expect(stored.status, stored.text).toBe(200);
    expect(stored.json).toMatchObject({ direction: 'MO', source: mobile, content: 'Tēnā koe \ufffd — ka kite 👋🏽' });
  });

  it('makes one reply of a webhook WhatsApp delivers three times', async () => {
    const mobile = '+6421600032';
    await h.wab.handsetSends('6421600032', { text: 'Привет — once only 👋🏽' }, { deliveries: 3 });
    await eventually(() => (replies(mobile).length > 0 ? true : undefined), 20_000, 50);
    await eventually(() => (h.hermod.output().includes('"msg":"dropped a redelivered reply"') ? true : undefined), 20_000, 50);
    await new Promise((r) => setTimeout(r, 1000));
    expect(replies(mobile)).toHaveLength(1);
  });

  it('opts the handset out when it writes STOP on WhatsApp, so a later message to it is refused', async () => {
    const mobile = '+6421600043';
    await h.wab.handsetSends('6421600043', { text: 'STOP' });
    await eventually(async () => ((await h.hermod.cli(['optouts', 'list', 'acme'])).output.includes(mobile) ? true : undefined), 20_000, 100);
    const id = await sendIm(mobile, [{ channel: 'wab' }]);
    const outcome = await eventually(() => imCallbacks(id).find((c) => c.channel === undefined && c.status !== 'accepted'), 20_000, 50);
    expect(outcome.status).toBe('rejected');
    expect(h.wab.received.some((m) => m.to === '6421600043')).toBe(false);
  });

  it('gives the owner the replies to a second number it claimed by its phone number id', async () => {
    const claim = await h.hermod.cli(['apps', 'set-sources', 'acme', `+${BUSINESS}`, '100000000000002']);
    expect(claim.code, claim.output).toBe(0);
    const mobile = '+6421600054'; // never messaged by anyone: only the claim can route its reply
    await h.wab.handsetSends('6421600054', { text: 'He pātai tāku 🙋🏽' }, { to: { displayPhoneNumber: '15550000002', phoneNumberId: '100000000000002' } });
    const [reply] = await eventually(() => (replies(mobile).length > 0 ? replies(mobile) : undefined), 20_000, 50);
    expect(reply).toMatchObject({ content: 'He pātai tāku 🙋🏽', destination: '+15550000002' });
    expect(await logged('reply routed', mobile)).toEqual([expect.stringContaining('"rule":"claimed-address"')]);
  });

  it('gives a reply to the application whose WhatsApp message the handset got last, though another owns the number, and settles that attempt read', async () => {
    const created = await h.hermod.cli(['apps', 'create', 'globex', '--api-key']);
    expect(created.code, created.output).toBe(0);
    const key = /api key: (\S+)/.exec(created.output)![1]!;
    const callbacks = await h.hermod.cli([
      'apps',
      'set-callbacks',
      'globex',
      '--reply',
      `${h.receiverUrl}/globex-reply`,
      '--im-status',
      `${h.receiverUrl}/globex-im`,
    ]);
    expect(callbacks.code, callbacks.output).toBe(0);
    const mobile = '+6421600065';
    // acme (the number's owner) messaged the handset first, globex after it: from the one business number.
    await sendIm(mobile, [{ channel: 'wab' }]);
    const sent = await h.client.post(
      '/rest/im/v1/message',
      {
        destination: { mobile },
        message: { type: 'text', text: { body: 'Nā Globex tēnei 📦' } },
        delivery_attempts: [{ first: { channel: 'wab', event: 'read', timeout: 30 } }, { last: { channel: 'sms' } }],
      },
      { authorization: key },
    );
    expect(sent.status, sent.text).toBe(202);
    await eventually(() => h.wab.received.filter((m) => m.to === '6421600065').length === 2 || undefined, 20_000, 50);
    await h.wab.handsetSends('6421600065', { text: 'Āe, mō Globex tēnā 👍🏽' });

    const reply = await eventually(() => h.callbacks.find((c) => c.body.source === mobile && typeof c.body.content === 'string'), 20_000, 50);
    expect(reply.path).toBe('/globex-reply');
    expect(reply.body).toMatchObject({ content: 'Āe, mō Globex tēnā 👍🏽', reply_to: sent.json.id });
    const outcome = await eventually(() => imCallbacks(sent.json.id).find((c) => c.channel === undefined && c.status !== 'accepted'), 20_000, 50);
    expect(outcome.status).toBe('read');
    await new Promise((r) => setTimeout(r, 500));
    expect(replies(mobile)).toHaveLength(1);
  });

  it("gives a reply that quotes a message (WhatsApp's context) to the application that sent that one, though another messaged the handset after it", async () => {
    const created = await h.hermod.cli(['apps', 'create', 'wonka', '--api-key']);
    expect(created.code, created.output).toBe(0);
    const key = /api key: (\S+)/.exec(created.output)![1]!;
    const callbacks = await h.hermod.cli(['apps', 'set-callbacks', 'wonka', '--reply', `${h.receiverUrl}/wonka-reply`]);
    expect(callbacks.code, callbacks.output).toBe(0);
    const mobile = '+6421600082';
    // acme (the number's owner) asks first; wonka messages the handset after it, from the one business number.
    const asked = await sendIm(mobile, [{ channel: 'wab' }]);
    await eventually(() => h.wab.received.some((m) => m.to === '6421600082') || undefined, 20_000, 50);
    const wonka = await h.client.post(
      '/rest/im/v1/message',
      { destination: { mobile }, message: { type: 'text', text: { body: 'Nā Wonka tēnei 🍫' } }, delivery_attempts: [{ channel: 'wab' }] },
      { authorization: key },
    );
    expect(wonka.status, wonka.text).toBe(202);
    await eventually(() => h.wab.received.filter((m) => m.to === '6421600082').length === 2 || undefined, 20_000, 50);
    // The handset swipes to reply to acme's question: the reply quotes its wamid.
    const question = h.wab.received.find((m) => m.to === '6421600082' && m.text?.body === KIA_ORA)!;
    await h.wab.handsetSends('6421600082', { text: 'Āe, ka pai — 好的 👍🏽' }, { context: question.id });

    const reply = await eventually(() => h.callbacks.find((c) => c.body.source === mobile && typeof c.body.content === 'string'), 20_000, 50);
    expect(reply.path).toBe('/reply');
    expect(reply.body).toMatchObject({ content: 'Āe, ka pai — 好的 👍🏽', reply_to: asked });
    // The log names the answered message as the client knows it, as the callback does, and the attempt the handset quoted.
    expect(await logged('reply routed', mobile)).toEqual([
      expect.stringMatching(new RegExp(`"rule":"quoted-message".*"replyTo":"${asked}","attempt":"[0-9a-f-]{36}"`)),
    ]);
    await new Promise((r) => setTimeout(r, 500));
    expect(h.callbacks.filter((c) => c.path === '/wonka-reply')).toEqual([]);
  });

  it('gives a reply on the shared number to the application whose WhatsApp message the handset got last, after a restart forgot hot state', async () => {
    const created = await h.hermod.cli(['apps', 'create', 'initech', '--api-key']);
    expect(created.code, created.output).toBe(0);
    const key = /api key: (\S+)/.exec(created.output)![1]!;
    const callbacks = await h.hermod.cli(['apps', 'set-callbacks', 'initech', '--reply', `${h.receiverUrl}/initech-reply`]);
    expect(callbacks.code, callbacks.output).toBe(0);
    const mobile = '+6421600076';
    const sent = await h.client.post(
      '/rest/im/v1/message',
      { destination: { mobile }, message: { type: 'text', text: { body: 'Nā Initech tēnei 🧾' } }, delivery_attempts: [{ channel: 'wab' }] },
      { authorization: key },
    );
    expect(sent.status, sent.text).toBe(202);
    await eventually(() => h.wab.received.some((m) => m.to === '6421600076') || undefined, 20_000, 50);
    // In-process hot state is gone after the restart: history alone knows who messaged the handset.
    await h.restart();
    await h.wab.handsetSends('6421600076', { text: 'Āe, mō Initech 👍🏽' });

    const reply = await eventually(() => h.callbacks.find((c) => c.body.source === mobile && typeof c.body.content === 'string'), 30_000, 50);
    const routed = h.hermod
      .output()
      .split('\n')
      .filter((l) => l.includes('reply routed') && l.includes(mobile));
    expect(reply.path, routed.join('\n')).toBe('/initech-reply');
    expect(reply.body).toMatchObject({ content: 'Āe, mō Initech 👍🏽', reply_to: sent.json.id });
  });

  it("keeps a reply to a WhatsApp number no application sends from or claimed from the application that last texted the handset (trial: it got another business's customer)", async () => {
    const mobile = '+6421600098';
    // acme texts the handset by SMS; the handset then writes on WhatsApp to a business number hermod never sent from.
    const texted = await sendIm(mobile, [{ channel: 'sms' }]);
    await eventually(() => imCallbacks(texted).find((c) => c.channel === 'sms' && c.status !== 'accepted'), 20_000, 50);
    await h.wab.handsetSends(
      '6421600098',
      { text: 'STOP — kāore au i te mōhio ki a koe 🤔' },
      { to: { displayPhoneNumber: '15550000009', phoneNumberId: '100000000000009' } },
    );

    expect(await logged('reply matches no application', mobile, 20_000)).toEqual([expect.stringContaining('"rule":"unmatched"')]);
    await new Promise((r) => setTimeout(r, 500));
    expect(replies(mobile)).toEqual([]);
    // Its STOP opted the handset out of nothing: acme may still message it.
    expect((await h.hermod.cli(['optouts', 'list', 'acme'])).output).not.toContain(mobile);
  });

  it('refuses a messages webhook that WhatsApp did not sign', async () => {
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
    const r = await h.client.request('POST', '/webhooks/wab', { raw: body, headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(401);
  });
});
