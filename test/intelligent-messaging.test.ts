import { randomUUID } from 'node:crypto';
import { credentials } from '@grpc/grpc-js';
import { type MessageJourney, OperationsClient } from '../proto/gen/hermod/v1/operations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imAttemptId } from '../core/im/im-ids';
import { eventually } from './support/eventually';
import { startHermodWithChannels, type HermodWithChannels } from './support/hermod-with-channels';
import { seriesSum } from './support/metric-samples';

const STAGE: Record<string, number> = { accepted: 0, sent: 2, submitted: 3, received: 4, failed: 4, rejected: 4, expired: 4, read: 5 };

describe('Intelligent Messaging over every channel, with fallback', () => {
  let h: HermodWithChannels;
  const smsTo = (handset: string) => smsReceived.filter((m) => m.destination.replace(/^\+/, '') === handset.replace(/^\+/, ''));
  const smsReceived: { destination: string; text: string }[] = [];

  beforeAll(async () => {
    // WhatsApp reads come 1.5 s after the send: inside a 5 s timeout, after a 1 s one.
    h = await startHermodWithChannels('im', { readDelayMs: 1500 });
    h.smsc.on('message', (m: { destination: string; text: string }) => smsReceived.push(m));
  }, 90_000);

  afterAll(() => h?.stop());

  const send = async (body: Record<string, unknown>): Promise<string> => {
    const r = await h.client.post('/rest/im/v1/message', body);
    expect(r.status, r.text).toBe(202);
    expect(r.json.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    return r.json.id as string;
  };
  const callbacksOf = (id: string) =>
    h.callbacks.filter((c) => c.body.id === id).map((c) => c.body as { id: string; status: string; detail: string; channel?: string; attempt?: number });
  /**
   * Waits for the message's outcome (a callback without a channel, after
   * `accepted`), then checks that the message said `accepted` then that
   * outcome and nothing else, that each attempt's callbacks moved forward,
   * and that the expected statuses came in order.
   */
  const settles = async (id: string, final: string, expected: string[]) => {
    await eventually(async () => (callbacksOf(id).some((c) => c.channel === undefined && c.status === final) ? true : undefined), 20_000, 50);
    await new Promise((r) => setTimeout(r, 300)); // anything late would show now
    const all = callbacksOf(id);
    const shown = all.map((c) => `${c.status}${c.channel ? `@${c.channel}#${c.attempt}` : ''}`).join(' → ');
    expect(
      all.filter((c) => c.channel === undefined).map((c) => c.status),
      shown,
    ).toEqual(['accepted', final]);
    for (const n of new Set(all.map((c) => c.attempt).filter((a) => a !== undefined))) {
      const statuses = all.filter((c) => c.attempt === n).map((c) => c.status);
      if (statuses.at(-1) === 'expired') statuses.pop(); // timed out: told after whatever it had reached
      for (let i = 1; i < statuses.length; i++) expect(STAGE[statuses[i]!]!, shown).toBeGreaterThan(STAGE[statuses[i - 1]!]!);
    }
    const statuses = all.map((c) => c.status);
    const positions = expected.map((s) => statuses.indexOf(s));
    expect(
      positions.every((p) => p >= 0),
      shown,
    ).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(all.at(-1), shown).toMatchObject({ status: final });
    expect(all.at(-1)!.channel, shown).toBeUndefined();
    return statuses;
  };

  it('tells received before read, once each, when WhatsApp posts the read before the delivered', async () => {
    const mobile = '+6421100006'; // the simulator posts sent, read, then delivered
    const id = await send({
      destination: { mobile },
      message: { type: 'text', text: { body: 'Kua pānuihia? 👀 已读' } },
      delivery_attempts: [{ channel: 'wab', event: 'read', timeout: 10 }],
    });
    await settles(id, 'read', ['accepted', 'submitted', 'received', 'read']);
    const attempt = callbacksOf(id)
      .filter((c) => c.channel !== undefined)
      .map((c) => c.status);
    expect(attempt).toEqual(['accepted', 'sent', 'submitted', 'received', 'read']);
  });

  it('delivers text on WhatsApp that is read within its timeout, without falling back', async () => {
    const mobile = '+6421100001';
    const id = await send({
      destination: { mobile },
      message: { type: 'text', text: { body: 'Kua rite tō tēpu — your table is ready 🍽️' } },
      delivery_attempts: [{ first: { channel: 'wab', event: 'read', timeout: 5 } }, { last: { channel: 'sms' } }],
      reference: 'tēpu-12',
    });
    await settles(id, 'read', ['accepted', 'submitted', 'received', 'read']);
    expect(callbacksOf(id).every((c) => c.detail === 'tēpu-12')).toBe(true);
    expect(h.wab.received.filter((m) => m.to === mobile.slice(1))).toMatchObject([
      { type: 'text', text: { body: 'Kua rite tō tēpu — your table is ready 🍽️' } },
    ]);
    expect(smsTo(mobile)).toEqual([]);
    // SMS Gateway v2 reads SMS messages: an Intelligent Messaging id is not one of them (its content is its request).
    const read = await h.client.get(`/rest/sms/v2/messages?id=${id}`, { authorization: `Basic ${Buffer.from('acme:secret').toString('base64')}` });
    expect(read.status).toBe(404);
    expect(read.json).toMatchObject({ statusCode: 404, error: expect.any(String), message: expect.stringContaining('Intelligent Messaging') });
    expect(read.text).not.toContain('attempts');
  });

  it('falls back to SMS when WhatsApp does not reach read within 2 s, and SMS delivers it', async () => {
    const mobile = '+6421100010'; // the WhatsApp simulator delivers but never reads numbers ending in 0
    const started = Date.now();
    const id = await send({
      destination: { mobile },
      message: { type: 'text', text: { body: 'Рейс NZ101: посадка у выхода 7 ✈️' } },
      delivery_attempts: [{ channel: 'wab', event: 'read', timeout: 2 }, { channel: 'sms' }],
    });
    await settles(id, 'received', ['accepted', 'submitted', 'received']);
    await eventually(async () => (smsTo(mobile).length === 1 ? true : undefined), 10_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(smsTo(mobile)[0]!.text).toBe('Рейс NZ101: посадка у выхода 7 ✈️');
    expect(h.wab.received.filter((m) => m.to === mobile.slice(1))).toHaveLength(1);

    // The operator's journey of the message shows each attempt's events on its channel, numbered as its callbacks number them.
    const operations = new OperationsClient(h.hermod.coreAddress, credentials.createInsecure());
    const journey = await new Promise<MessageJourney>((resolve, reject) =>
      operations.getMessageJourney({ id }, (err, j) => (err ? reject(err) : resolve(j))),
    ).finally(() => operations.close());
    expect(journey.attempts).toBe(2);
    const on = (attempt: number) => journey.events.filter((e) => e.attempt === attempt).map((e) => `${e.channel} ${e.status}`);
    expect(on(0).slice(0, 2)).toEqual(['im accepted', 'im queued']);
    expect(on(0)).toContain('im received');
    expect(on(1)).toEqual(expect.arrayContaining(['wab accepted', 'wab submitted', 'wab expired']));
    expect(on(2)).toEqual(expect.arrayContaining(['sms accepted', 'sms submitted', 'sms received']));
    // Attempt by attempt, between the message's acceptance and its outcome.
    const order = journey.events.map((e) => e.attempt);
    expect(order.indexOf(1)).toBeGreaterThan(order.indexOf(0));
    expect(order.lastIndexOf(1)).toBeLessThan(order.indexOf(2));
    expect(order.at(-1)).toBe(0);
  });

  it('ignores a WhatsApp read that arrives after the SMS fallback started: nothing is sent twice', async () => {
    const mobile = '+6421100021';
    const id = await send({
      destination: { mobile },
      message: { type: 'text', text: { body: '包裹已到门口 📦' } },
      delivery_attempts: [{ channel: 'wab', event: 'read', timeout: 1 }, { channel: 'sms' }],
    });
    await eventually(async () => (smsTo(mobile).length === 1 ? true : undefined), 10_000);
    // The simulator's read for WhatsApp comes at 1.5 s, after the fallback at 1 s; wait past it.
    await new Promise((r) => setTimeout(r, 2500));
    const statuses = await settles(id, 'received', ['accepted', 'received']);
    expect(statuses).not.toContain('read');
    expect(smsTo(mobile)).toHaveLength(1);
    expect(h.wab.received.filter((m) => m.to === mobile.slice(1))).toHaveLength(1);
  });

  it('names the Intelligent Messaging message, not its SMS attempt, as reply_to of a reply to the SMS fallback', async () => {
    const mobile = '+6421100039'; // WhatsApp fails numbers ending in 9: SMS, attempt 2, delivers
    const set = await h.hermod.cli(['apps', 'set-callbacks', 'acme', '--reply', `${h.receiverUrl}/reply`]);
    expect(set.code, set.output).toBe(0);
    const id = await send({
      destination: { mobile },
      message: { type: 'text', text: { body: 'Kua tae mai tō pūkete 📦 — 您的包裹到了' } },
      delivery_attempts: [{ channel: 'wab' }, { channel: 'sms' }],
      reference: 'pūkete-9',
    });
    await settles(id, 'received', ['accepted', 'failed', 'received']);
    const text = 'Ngā mihi — reply to IM 🙏';
    await h.smsc.originate({ source: mobile, destination: '9998', text });
    const reply = await eventually(async () => h.callbacks.find((c) => c.body.content === text)?.body, 20_000, 50);
    expect(reply).toMatchObject({ source: mobile, content: text, reply_to: id });
    // The SMS attempt is the IM message's own business: SMS Gateway v2 does not read it by its id either.
    const basic = { authorization: `Basic ${Buffer.from('acme:secret').toString('base64')}` };
    const attempt = await h.client.get(`/rest/sms/v2/messages?id=${imAttemptId(id, 1)}`, basic);
    expect(attempt.status, attempt.text).toBe(404);
    expect(attempt.json).toMatchObject({ statusCode: 404, message: expect.stringContaining('Intelligent Messaging') });
    expect(attempt.text).not.toContain('pūkete-9');
  });

  it('delivers to an e-mail destination through the SMTP sink', async () => {
    const email = `ana.${randomUUID().slice(0, 8)}@example.com`;
    const invoice = 'Kua rite tō nama utu — 您的发票 🧾';
    const id = await send({ destination: { email }, message: { type: 'text', text: { body: invoice } }, delivery_attempts: [{ channel: 'email' }] });
    await settles(id, 'received', ['accepted', 'received']);
    const mail = h.smtp.mails.find((m) => m.to.includes(email));
    expect(mail).toMatchObject({ subject: invoice, text: expect.stringContaining(invoice) });
  });

  it('delivers to e-mail addresses with a macron domain and a non-ASCII local part (IDN and SMTPUTF8)', async () => {
    const tag = randomUUID().slice(0, 8);
    // .nz registers domains with macrons; the sink sees the domain as the carrier's DNS would have it, in punycode.
    const macronDomain = `mere.${tag}@kōrero.nz`;
    const id = await send({
      destination: { email: macronDomain },
      message: { type: 'text', text: { body: 'Kia ora Mere 👋🏽' } },
      delivery_attempts: [{ channel: 'email' }],
    });
    await settles(id, 'received', ['accepted', 'received']);
    expect(h.smtp.mails.find((m) => m.to.some((to) => to === `mere.${tag}@xn--krero-nva.nz` || to === macronDomain))).toBeDefined();
    const unicodeLocal = `用户.${tag}@例子.广告`;
    const id2 = await send({
      destination: { email: unicodeLocal },
      message: { type: 'text', text: { body: '你好 🧧' } },
      delivery_attempts: [{ channel: 'email' }],
    });
    await settles(id2, 'received', ['accepted', 'received']);
    expect(h.smtp.mails.find((m) => m.to.some((to) => to.startsWith(`用户.${tag}@`)))).toBeDefined();
  });

  it('makes the first line of a long e-mail its subject, cut at 78 characters without breaking an emoji in two', async () => {
    const email = `tane.${randomUUID().slice(0, 8)}@example.com`;
    // 77 characters inside the BMP, then an emoji with a skin-tone modifier as the 78th.
    const lead = Array.from('Kia ora, e hoa mā — tēnā koe. Привет, 你好世界! '.repeat(3)).slice(0, 77).join('');
    const body = `${lead}👋🏽🎉 and the rest of the line\nНа второй строке — 第二行`;
    const id = await send({ destination: { email }, message: { type: 'text', text: { body } }, delivery_attempts: [{ channel: 'email' }] });
    await settles(id, 'received', ['accepted', 'received']);
    const mail = h.smtp.mails.find((m) => m.to.includes(email));
    expect(mail?.subject).toBe(`${lead}👋🏽`);
    expect(mail?.text).toContain(body);
  });

  it('sends a template with its parameters on WhatsApp', async () => {
    const templateId = randomUUID();
    const set = await h.hermod.cli(['im-templates', 'set', 'acme', templateId, 'order_shipped', 'en_US', 'Kia ora {{name}}, kua tukuna tō ota {{order}} 📦']);
    expect(set.code, set.output).toBe(0);
    const mobile = '+6421100031';
    const id = await send({
      destination: { mobile },
      message: {
        type: 'template',
        template: {
          template_id: templateId,
          language: 'en_US',
          parameters: [
            { name: 'name', text: 'Ngāi Tahu 👋🏽' },
            { name: 'order', text: 'Заказ-77' },
          ],
        },
      },
      delivery_attempts: [{ channel: 'wab' }],
    });
    await settles(id, 'received', ['accepted', 'received']);
    const sent = h.wab.received.find((m) => m.to === mobile.slice(1))!;
    expect(sent.type).toBe('template');
    expect(sent.template).toMatchObject({ name: 'order_shipped', language: { code: 'en_US' } });
    expect(JSON.stringify(sent.template!.components)).toContain('Заказ-77');
    expect(JSON.stringify(sent.template!.components)).toContain('Ngāi Tahu 👋🏽');
  });

  it('refuses a template whose text, filled in, is longer than RCS takes when RCS is its only attempt, and sends it on WhatsApp, which takes it as a template', async () => {
    const templateId = randomUUID();
    // Thirteen parameters of 240 characters (each at most 256): 3,120 characters filled in.
    const names = Array.from({ length: 13 }, (_, i) => `wahanga${i}`);
    const body = names.map((n) => `{{${n}}}`).join('');
    expect((await h.hermod.cli(['im-templates', 'set', 'acme', templateId, 'panui_roa', 'mi_NZ', body])).code).toBe(0);
    const message = {
      type: 'template',
      template: { template_id: templateId, language: 'mi_NZ', parameters: names.map((name) => ({ name, text: 'Tēnā koe, e hoa '.repeat(15) })) },
    };
    const refused = await h.client.post('/rest/im/v1/message', { destination: { mobile: '+6421100032' }, message, delivery_attempts: [{ channel: 'rcs' }] });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json).toMatchObject({ code: 422, message: expect.stringContaining('RCS (RBM) takes a text of at most 3,072 characters') });
    const id = await send({ destination: { mobile: '+6421100032' }, message, delivery_attempts: [{ channel: 'wab' }] });
    await settles(id, 'received', ['accepted', 'received']);
  });

  it('refuses a template asked in a language other than the one it is held in, naming the field', async () => {
    const templateId = randomUUID();
    expect((await h.hermod.cli(['im-templates', 'set', 'acme', templateId, 'mihi', 'mi_NZ', 'Tēnā koe {{ingoa}} 👋🏽'])).code).toBe(0);
    const r = await h.client.post('/rest/im/v1/message', {
      destination: { mobile: '+6421100094' },
      message: { type: 'template', template: { template_id: templateId, language: 'en_US', parameters: [{ name: 'ingoa', text: 'Mere' }] } },
      delivery_attempts: [{ channel: 'wab' }, { channel: 'sms' }],
    });
    expect(r.status, r.text).toBe(422);
    expect(r.json).toMatchObject({
      code: 422,
      errors: [{ field: 'message.template.language', description: `template ${templateId} is held in mi_NZ, not en_US` }],
    });
    // The same language in other case is the one held, and goes to WhatsApp as it was registered.
    const id = await send({
      destination: { mobile: '+6421100095' },
      message: { type: 'template', template: { template_id: templateId, language: 'MI_nz', parameters: [{ name: 'ingoa', text: 'Mere' }] } },
      delivery_attempts: [{ channel: 'wab' }],
    });
    await settles(id, 'received', ['accepted', 'received']);
    expect(h.wab.received.find((m) => m.to === '6421100095')?.template).toMatchObject({ name: 'mihi', language: { code: 'mi_NZ' } });
  });

  it('refuses a template whose placeholder no parameter can fill, rather than send the braces to customers', async () => {
    // A send's parameter names are letters A–Z, digits, '-', '_' and spaces: {{ōta}} could never be filled.
    const templateId = randomUUID();
    const refused = await h.hermod.cli(['im-templates', 'set', 'acme', templateId, 'tuku_ota', 'mi_NZ', 'Kia ora {{ingoa}}, kua tukuna tō ōta {{ōta}} 📦']);
    expect(refused.code, refused.output).not.toBe(0);
    expect(refused.output).toMatch(/\{\{ōta\}\}/);
    const listed = await h.hermod.cli(['im-templates', 'list', 'acme']);
    expect(listed.output).not.toContain(templateId);

    const set = await h.hermod.cli(['im-templates', 'set', 'acme', templateId, 'tuku_ota', 'mi_NZ', 'Kia ora {{ingoa}}, kua tukuna tō ōta {{ota}} 📦']);
    expect(set.code, set.output).toBe(0);
    const r = await h.client.post('/rest/im/v1/message', {
      destination: { mobile: '+6421100032' },
      message: { type: 'template', template: { template_id: templateId, language: 'mi_NZ', parameters: [{ name: 'ingoa', text: 'Mere' }] } },
      delivery_attempts: [{ channel: 'sms' }],
    });
    expect(r.status, r.text).toBe(422);
    expect(r.json.message).toMatch(/template parameters missing: ota/);
  });

  it('sends a media message on MMS', async () => {
    const mobile = '+6421100041';
    const id = await send({
      destination: { mobile },
      message: { type: 'media', media: { type: 'image/png', url: 'https://cdn.example.com/coupon.png' } },
      delivery_attempts: [{ channel: 'mms' }],
    });
    await settles(id, 'received', ['accepted', 'received']);
    expect(JSON.stringify(h.mms.received.find((m) => JSON.stringify(m).includes(mobile)))).toContain('https://cdn.example.com/coupon.png');
  });

  it('delivers on RCS', async () => {
    const mobile = '+6421100050'; // RCS simulator: delivered, never read, for numbers ending in 0
    const id = await send({
      destination: { mobile },
      message: { type: 'text', text: { body: 'Kei te tāpiritia tō pāhi eke 🎫' } },
      delivery_attempts: [{ channel: 'rcs' }],
    });
    await settles(id, 'received', ['accepted', 'received']);
    expect(JSON.stringify(h.rcs.received)).toContain('Kei te tāpiritia tō pāhi eke 🎫');
  });

  it('resolves a destination by contact id', async () => {
    const contact = randomUUID();
    const set = await h.hermod.cli(['contacts', 'set', 'acme', contact, '--mobile', '+6421100061']);
    expect(set.code, set.output).toBe(0);
    const id = await send({
      destination: { contact_id: contact },
      message: { type: 'text', text: { body: 'Привет, 你好 👋🏽' } },
      delivery_attempts: [{ channel: 'sms' }],
    });
    await settles(id, 'received', ['accepted', 'received']);
    expect(smsTo('+6421100061')).toHaveLength(1);
    const unknown = await h.client.post('/rest/im/v1/message', {
      destination: { contact_id: randomUUID() },
      message: { type: 'text', text: { body: 'Привет' } },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ code: 404, errors: [expect.objectContaining({ field: 'destination.contact_id' })] });
  });

  it('refuses a contact whose mobile or WhatsApp number is not one a message could reach, naming the number meant', async () => {
    const contact = randomUUID();
    const trunk = await h.hermod.cli(['contacts', 'set', 'acme', contact, '--mobile', '+640211234567']);
    expect(trunk.code).not.toBe(0);
    expect(trunk.output).toContain('the number from abroad is +64211234567');
    const whatsapp = await h.hermod.cli(['contacts', 'set', 'acme', contact, '--whatsapp', '640211234567']);
    expect(whatsapp.code).not.toBe(0);
    expect(whatsapp.output).toContain('the number from abroad is +64211234567');
    // No North American area code starts with 0 or 1: no carrier would take the number.
    const areaCode = await h.hermod.cli(['contacts', 'set', 'acme', contact, '--mobile', '+10555550123']);
    expect(areaCode.code).not.toBe(0);
    expect(areaCode.output).toContain('mobile has the area code 055 after the country code +1');
    const areaCodeWhatsapp = await h.hermod.cli(['contacts', 'set', 'acme', contact, '--whatsapp', '11234567890']);
    expect(areaCodeWhatsapp.code).not.toBe(0);
    expect(areaCodeWhatsapp.output).toContain('WhatsApp id has the area code 123 after the country code +1');
    const words = await h.hermod.cli(['contacts', 'set', 'acme', contact, '--mobile', 'Mere’s mobile']);
    expect(words.code).not.toBe(0);
    expect(words.output).toMatch(/mobile must be E\.164/);
    const listed = await h.hermod.cli(['contacts', 'list', 'acme']);
    expect(listed.output).not.toContain(contact);
  });

  it('sends every phone channel to the mobile the request names over a contact’s own numbers, WhatsApp included, so a fallback reaches one handset', async () => {
    const contact = randomUUID();
    const set = await h.hermod.cli(['contacts', 'set', 'acme', contact, '--mobile', '+6421100091', '--whatsapp', '6421100092']);
    expect(set.code, set.output).toBe(0);
    const mobile = '+6421100093';
    const id = await send({
      destination: { contact_id: contact, mobile },
      message: { type: 'text', text: { body: 'Ko wai tēnei? 📱' } },
      delivery_attempts: [{ channel: 'wab' }],
    });
    await settles(id, 'received', ['accepted', 'received']);
    expect(h.wab.received.filter((m) => m.to === mobile.slice(1))).toHaveLength(1);
    expect(h.wab.received.filter((m) => m.to === '6421100092')).toEqual([]);
    // The contact's own mobile named again (a client that always sends both): WhatsApp still goes to its WhatsApp number.
    const again = await send({
      destination: { contact_id: contact, mobile: '+6421100091' },
      message: { type: 'text', text: { body: 'Ko au anō tēnei 📱' } },
      delivery_attempts: [{ channel: 'wab' }],
    });
    await settles(again, 'received', ['accepted', 'received']);
    expect(h.wab.received.filter((m) => m.to === '6421100092')).toHaveLength(1);
  });

  it("sends nothing on WhatsApp to a contact whose WhatsApp number replied STOP or is blocked, though the contact's mobile is neither, and goes on to the next attempt", async () => {
    const [stopped, blocked] = [
      { contact: randomUUID(), mobile: '+6421100083', whatsapp: '6421100084' },
      { contact: randomUUID(), mobile: '+6421100085', whatsapp: '6421100086' },
    ];
    for (const c of [stopped, blocked]) {
      const set = await h.hermod.cli(['contacts', 'set', 'acme', c.contact, '--mobile', c.mobile, '--whatsapp', c.whatsapp]);
      expect(set.code, set.output).toBe(0);
    }
    // A first message reaches each on WhatsApp; one handset answers STOP there, an operator blocks the other's number.
    const first = await send({
      destination: { contact_id: stopped.contact },
      message: { type: 'text', text: { body: 'Kia ora — te pānui tuatahi 📣' } },
      delivery_attempts: [{ channel: 'wab' }],
    });
    await settles(first, 'received', ['accepted', 'received']);
    await h.wab.handsetSends(stopped.whatsapp, { text: 'Stop!' });
    await eventually(async () => ((await h.hermod.cli(['optouts', 'list', 'acme'])).output.includes(stopped.whatsapp) ? true : undefined), 20_000, 200);
    expect((await h.hermod.cli(['blocklist', 'add', '--app', 'acme', `+${blocked.whatsapp}`])).code).toBe(0);
    await new Promise((r) => setTimeout(r, 1500)); // core reads the block list within a second

    const sentBefore = h.wab.received.length;
    for (const c of [stopped, blocked]) {
      const id = await send({
        destination: { contact_id: c.contact },
        message: { type: 'text', text: { body: 'Hoko nui — 大促销 🛍️' } },
        delivery_attempts: [{ channel: 'wab' }, { channel: 'sms' }],
      });
      await settles(id, 'received', ['accepted', 'rejected', 'received']);
      const onWhatsApp = callbacksOf(id).filter((x) => x.channel === 'wab');
      expect(onWhatsApp.map((x) => x.status)).toEqual(['accepted', 'rejected']);
      expect(smsTo(c.mobile)).toHaveLength(1);
    }
    expect(h.wab.received.slice(sentBefore).map((m) => m.to)).toEqual([]);
  });

  it('uses the application’s default attempts (sms when unset) and refuses a destination no attempt can reach', async () => {
    const id = await send({ destination: { mobile: '+6421100071' }, message: { type: 'text', text: { body: 'Kia ora — default route 🎉' } } });
    await settles(id, 'received', ['accepted', 'received']);
    expect(smsTo('+6421100071')).toHaveLength(1);
    const r = await h.client.post('/rest/im/v1/message', {
      destination: { email: 'x@example.com' },
      message: { type: 'text', text: { body: '无路可达' } },
      delivery_attempts: [{ channel: 'sms' }],
    });
    expect(r.status).toBe(422);
  });

  it('refuses a text no attempt can carry (more than 255 SMS parts) with 422, and takes it when e-mail is tried first', async () => {
    const body = '😀'.repeat(10_000);
    const r = await h.client.post('/rest/im/v1/message', {
      destination: { mobile: '+6421100072' },
      message: { type: 'text', text: { body } },
      delivery_attempts: [{ channel: 'sms' }],
    });
    expect(r.status, r.text).toBe(422);
    expect(r.json).toMatchObject({ code: 422, message: expect.stringContaining('304 parts') });
    expect(smsTo('+6421100072')).toHaveLength(0);
    const both = await send({
      destination: { mobile: '+6421100072', email: 'roa@example.nz' },
      message: { type: 'text', text: { body } },
      delivery_attempts: [{ channel: 'email' }, { channel: 'sms' }],
    });
    await settles(both, 'received', ['accepted', 'received']);
    expect(smsTo('+6421100072')).toHaveLength(0);
  });

  it('refuses a text longer than WhatsApp and RCS take when no other attempt can carry it, and otherwise falls back past them at once', async () => {
    const body = 'Kia ora e hoa mā, tēnā koe — 你好世界 👩🏽‍💻 '.repeat(120);
    const mobile = '+6421100073';
    const refused = await h.client.post('/rest/im/v1/message', {
      destination: { mobile },
      message: { type: 'text', text: { body } },
      delivery_attempts: [{ channel: 'wab' }, { channel: 'rcs' }],
    });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json).toMatchObject({
      code: 422,
      message: expect.stringMatching(/WhatsApp takes a text of at most 4,096 characters.*RCS \(RBM\) takes a text of at most 3,072/),
    });
    const id = await send({
      destination: { mobile },
      message: { type: 'text', text: { body } },
      delivery_attempts: [{ channel: 'wab', timeout: 600 }, { channel: 'sms' }],
    });
    await settles(id, 'received', ['accepted', 'rejected', 'received']);
    const wab = callbacksOf(id).filter((c) => c.channel === 'wab');
    expect(wab.map((c) => c.status)).toEqual(['accepted', 'rejected']);
    expect(JSON.stringify(wab.at(-1))).toContain('4,096 characters');
    expect(h.wab.received.filter((m) => m.to === mobile.slice(1))).toHaveLength(0);
    expect(smsTo(mobile)).toHaveLength(1);
    expect(smsTo(mobile)[0]!.text).toBe(body);
  });

  it('refuses with 422 an attempt waiting for an event its channel never reports, such as read on SMS or e-mail, naming it where the client wrote it, and sends nothing', async () => {
    const mobile = '+6421100081';
    const sent = smsTo(mobile).length;
    // A labelled attempt is named with its label, as the validator names its other problems (trial: the label was left out).
    for (const [attempts, at, channel] of [
      [[{ channel: 'sms', event: 'read', timeout: 3 }], '[0]', 'sms'],
      [[{ channel: 'wab', event: 'read', timeout: 30 }, { last: { channel: 'email', event: 'read' } }], '[1].last', 'email'],
      [[{ first: { channel: 'mms', event: 'READ' } }, { channel: 'sms' }], '[0].first', 'mms'],
    ] as const) {
      const r = await h.client.post('/rest/im/v1/message', {
        destination: { mobile, email: 'mere.tūhoe@example.nz' },
        message: { type: 'text', text: { body: 'Kua pānuitia? 已读吗？ 👀' } },
        delivery_attempts: attempts,
      });
      expect(r.status, r.text).toBe(422);
      expect(r.json).toMatchObject({
        code: 422,
        message: `delivery_attempts${at}.event: ${channel} never reports read: only wab, rcs do`,
        errors: [{ field: `delivery_attempts${at}.event`, code: 422, description: `${channel} never reports read: only wab, rcs do` }],
      });
    }
    // An event no channel reports: the message says what the field's description says.
    const unknown = await h.client.post('/rest/im/v1/message', {
      destination: { mobile },
      message: { type: 'text', text: { body: 'Kua whakatuwheratia? 📬' } },
      delivery_attempts: [{ channel: 'sms' }, { last: { channel: 'email', event: 'opened' } }],
    });
    expect(unknown.status, unknown.text).toBe(422);
    const said = unknown.json as { message: string; errors: { field: string; description: string }[] };
    expect(said.errors).toEqual([expect.objectContaining({ field: 'delivery_attempts[1].last.event' })]);
    expect(said.message).toBe(`delivery_attempts[1].last.event: ${said.errors[0]!.description}`);
    expect(said.errors[0]!.description).toMatch(/submitted, sent, delivered \(received\) or read/);
    // An event every channel reports is still taken on SMS and e-mail.
    const id = await send({
      destination: { mobile },
      message: { type: 'text', text: { body: 'Kua tae atu 📨' } },
      delivery_attempts: [{ channel: 'sms', event: 'delivered', timeout: 30 }],
    });
    await settles(id, 'received', ['accepted', 'received']);
    expect(smsTo(mobile)).toHaveLength(sent + 1);
  });

  it('ends as failed when the last channel fails, after trying each in order', async () => {
    const mobile = '+6421100019'; // WhatsApp simulator fails numbers ending in 9
    const id = await send({
      destination: { mobile },
      message: { type: 'text', text: { body: 'Ka hē tēnei — will fail' } },
      delivery_attempts: [{ channel: 'wab' }],
    });
    await settles(id, 'failed', ['accepted', 'failed']);
    // Why, in Meta's words beside its code, as an SMS failure gives its SMPP error's.
    expect(callbacksOf(id).find((c) => c.channel === 'wab' && c.status === 'failed')).toMatchObject({
      reason: '131026: Message undeliverable (Message could not be delivered)',
    });
  });

  it('counts an attempt with no address for its channel as failed in hermod_im_attempts_total, not as a late report', async () => {
    const attempts = async () => {
      const text = await (await fetch(`http://127.0.0.1:${h.hermod.metricsPort}/metrics`)).text();
      const count = (channel: string, outcome: string) => seriesSum(text, `hermod_im_attempts_total{channel="${channel}",outcome="${outcome}"}`) || 0;
      return { emailFailed: count('email', 'failed'), emailLate: count('email', 'late_report'), smsSucceeded: count('sms', 'succeeded') };
    };
    const before = await attempts();
    // No e-mail address: the first attempt goes nowhere, and SMS delivers.
    const id = await send({
      destination: { mobile: '+6421100024' },
      message: { type: 'text', text: { body: 'Kia ora — 你好 👋' } },
      delivery_attempts: [{ channel: 'email' }, { channel: 'sms' }],
    });
    await settles(id, 'received', ['accepted', 'rejected', 'received']);
    await new Promise((r) => setTimeout(r, 300));
    const after = await attempts();
    expect({
      emailFailed: after.emailFailed - before.emailFailed,
      emailLate: after.emailLate - before.emailLate,
      smsSucceeded: after.smsSucceeded - before.smsSucceeded,
    }).toEqual({ emailFailed: 1, emailLate: 0, smsSucceeded: 1 });
  });
});

describe('Intelligent Messaging across a restart', () => {
  let h: HermodWithChannels;
  afterAll(() => h?.stop());

  it('keeps an attempt’s timer through kill -9: the fallback still happens once the time is up', async () => {
    h = await startHermodWithChannels('im-restart');
    const sms: string[] = [];
    h.smsc.on('message', (m: { destination: string }) => sms.push(m.destination.replace(/^\+/, '')));
    const mobile = '+6421200010'; // delivered on WhatsApp, never read
    const r = await h.client.post('/rest/im/v1/message', {
      destination: { mobile },
      message: { type: 'text', text: { body: 'Āpōpō tō hui — 明天见 👋🏽' } },
      delivery_attempts: [{ channel: 'wab', event: 'read', timeout: 4 }, { channel: 'sms' }],
    });
    expect(r.status, r.text).toBe(202);
    const id = r.json.id as string;
    await eventually(async () => (h.wab.received.some((m) => m.to === mobile.slice(1)) ? true : undefined), 10_000);
    const sentAt = Date.now();
    // Killed once WhatsApp has reported delivery and that is on record (a kill before the carrier's
    // answer is recorded may send the attempt again: the at-least-once window every carrier hop has).
    await eventually(async () => (h.callbacks.some((c) => c.body.id === id && c.body.status === 'received') ? true : undefined), 10_000, 20);
    await new Promise((r) => setTimeout(r, 300));
    await h.restart();
    await eventually(async () => (sms.includes(mobile.slice(1)) ? true : undefined), 20_000, 100);
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(3500);
    expect(sms.filter((d) => d === mobile.slice(1))).toHaveLength(1);
    expect(h.wab.received.filter((m) => m.to === mobile.slice(1))).toHaveLength(1);
  }, 90_000);
});

describe('carrier webhooks and callback pacing', () => {
  let h: HermodWithChannels;
  beforeAll(async () => {
    h = await startHermodWithChannels('im-webhooks', { callbackRateLimit: 2 });
  }, 90_000);
  afterAll(() => h?.stop());

  it('refuses a carrier webhook whose signature does not match, and answers WhatsApp’s subscription handshake', async () => {
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
    const forged = await h.client.request('POST', '/webhooks/wab', {
      raw: body,
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=' + '0'.repeat(64) },
    });
    expect(forged.status).toBe(401);
    const unsigned = await h.client.request('POST', '/webhooks/mms', { raw: '{}', headers: { 'content-type': 'application/json' } });
    expect(unsigned.status).toBe(401);
    expect((await h.client.request('POST', '/webhooks/fax', { raw: '{}' })).status).toBe(404);
    const handshake = await h.client.get('/webhooks/wab?hub.mode=subscribe&hub.verify_token=webhook-secret&hub.challenge=1158201444');
    expect(handshake).toMatchObject({ status: 200, text: '1158201444' });
    expect((await h.client.get('/webhooks/wab?hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1')).status).toBe(403);
  });

  it('paces status callbacks to the rate the receiver announces in X-RateLimit-Limit, from the first callback after a start', async () => {
    const settled = (ids: string[]) =>
      eventually(
        async () =>
          ids.every((id) => h.callbacks.some((c) => c.body.id === id && c.body.channel === undefined && c.body.status === 'received')) ? true : undefined,
        30_000,
        100,
      );
    const send = async (i: number): Promise<string> => {
      const r = await h.client.post('/rest/im/v1/message', {
        destination: { mobile: `+642130000${i}` },
        message: { type: 'text', text: { body: `Kia ora ${i} 👋🏽` } },
        delivery_attempts: [{ channel: 'sms' }],
      });
      expect(r.status, r.text).toBe(202);
      return r.json.id as string;
    };
    // No callback has gone to this receiver since hermod started: the first answer tells hermod "2 per second", and
    // the callbacks of the burst wait for it rather than go out unpaced (as they would, too, right after a restart).
    const before = h.callbacks.length;
    const ids = await Promise.all([0, 1, 2].map(send));
    await settled(ids);
    // Every message posts about itself and its attempt, each in its own 500 ms slot: the n-th comes
    // no sooner than n slots after the first (less a quarter of a second: the first is also the first request on
    // a new connection, and it may arrive late while the next, on time, does not). Unpaced, they come within ms.
    // Counted from the second: the first also opens the connection, and a loaded CI machine delivered it 290 ms late,
    // so every later one looked early by its measure while each kept its 500 ms from the one before.
    const times = h.callbacks.slice(before + 1).map((c) => c.at);
    expect(times.length).toBeGreaterThanOrEqual(6);
    const early = times.map((t, n) => ({ n, after: t - times[0]! })).filter(({ n, after }) => after < n * 500 - 250);
    expect(early).toEqual([]);
  }, 60_000);

  it('stops pacing once the receiver answers without X-RateLimit-Limit (its limit lifted)', async () => {
    const send = async (i: number): Promise<string> => {
      const r = await h.client.post('/rest/im/v1/message', {
        destination: { mobile: `+642130001${i}` },
        message: { type: 'text', text: { body: `Kua wātea ${i} 🚀` } },
        delivery_attempts: [{ channel: 'sms' }],
      });
      expect(r.status, r.text).toBe(202);
      return r.json.id as string;
    };
    // Paced at 2 a second (learnt from a first callback), then the receiver's answers carry no limit.
    h.announceRateLimit(2);
    const learnt = await send(9);
    await eventually(
      () => (h.callbacks.some((c) => c.body.id === learnt && c.body.channel === undefined && c.body.status === 'received') ? true : undefined),
      30_000,
      50,
    );
    h.announceRateLimit(undefined);
    const first = await send(0);
    await eventually(
      () => (h.callbacks.some((c) => c.body.id === first && c.body.channel === undefined && c.body.status === 'received') ? true : undefined),
      30_000,
      50,
    );
    const before = h.callbacks.length;
    const ids = await Promise.all([1, 2, 3].map(send));
    await eventually(
      () => (ids.every((id) => h.callbacks.some((c) => c.body.id === id && c.body.channel === undefined && c.body.status === 'received')) ? true : undefined),
      30_000,
      50,
    );
    const times = h.callbacks.slice(before).map((c) => c.at);
    expect(times.length).toBeGreaterThanOrEqual(7);
    // Paced at 2 a second, 7 callbacks would span at least 3 s.
    try {
      expect(times[times.length - 1]! - times[0]!).toBeLessThan(2_000);
    } finally {
      h.announceRateLimit(2);
    }
  }, 60_000);
});
