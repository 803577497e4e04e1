import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImSendRequest } from '../../proto/gen/hermod/v1/im';
import { MESSAGE_ID, startTestServer, type TestServer } from './test-server';

const UUID = '3f2b8c1d-4e5a-4b6c-8d7e-9f0a1b2c3d4e';
const TEMPLATE_ID = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
const x = (n: number, ch = 'a'): string => ch.repeat(n);
/** `n` characters (code points) of world text: limits count characters, not UTF-16 units or bytes. */
const world = (n: number): string =>
  Array.from('Kia ora, e hoa mā — tēnā koe. Привет, 你好世界 👋🏽🎉 '.repeat(Math.ceil(n / 40) + 1))
    .slice(0, n)
    .join('');

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

type Body = Record<string, any>;
const request = (overrides: Body = {}): Body => ({
  destination: { mobile: '+64211234567' },
  message: { type: 'text', text: { body: 'Kia ora Ānaru — Заказ #42 готов! 你好 👋🏽' } },
  ...overrides,
});
const text = (body: unknown): Body => request({ message: { type: 'text', text: { body } } });
const media = (mediaBody: Body): Body => request({ message: { type: 'media', media: mediaBody } });
const template = (t: Body): Body => request({ message: { type: 'template', template: { template_id: TEMPLATE_ID, ...t } } });
const attempts = (...items: unknown[]): Body => request({ delivery_attempts: items });
const params = (n: number): Body[] => Array.from({ length: n }, (_, i) => ({ name: `p${i}`, text: `v${i}` }));

/** 202 with the id, and what core received. */
async function accepted(body: unknown): Promise<ImSendRequest> {
  const before = server.sent.length;
  const res = await server.post(body);
  expect(res.status, JSON.stringify(res.json)).toBe(202);
  expect(res.json).toEqual({ id: MESSAGE_ID });
  expect(server.sent.length).toBe(before + 1);
  return server.sent.at(-1)!;
}

/** 400 naming `field`, and nothing sent to core. */
async function rejected(body: unknown, field: string): Promise<any> {
  const before = server.sent.length;
  const res = await server.post(body);
  expect(res.status).toBe(400);
  expect(res.json.code).toBe(400);
  expect(res.json.statusCode).toBe(400);
  expect(res.json.error).toBe('Bad Request');
  expect(res.json.errors.map((e: { field?: string }) => e.field)).toContain(field);
  for (const e of res.json.errors) expect(e.code).toBe(400);
  expect(server.sent.length).toBe(before);
  return res.json;
}

describe('MessagePostRequest formats', () => {
  it('accepts a lowercase 36-character Uuid and refuses uppercase, 35 and 37 characters', async () => {
    const sent = await accepted(request({ destination: { contact_id: UUID } }));
    expect(sent.destination).toEqual({ contactId: UUID, mobile: '', email: '' });
    await rejected(request({ destination: { contact_id: UUID.toUpperCase() } }), 'destination.contact_id');
    await rejected(request({ destination: { contact_id: UUID.slice(0, 35) } }), 'destination.contact_id');
    await rejected(request({ destination: { contact_id: UUID + 'e' } }), 'destination.contact_id');
    await rejected(template({ template_id: TEMPLATE_ID.replace('a', 'g') }), 'message.template.template_id');
  });

  it('accepts a 16-character E164 number and refuses 17 characters, a leading 0, no plus and a lone digit', async () => {
    const mobile = '+1' + x(14, '2');
    expect(mobile).toHaveLength(16);
    expect((await accepted(request({ destination: { mobile } }))).destination?.mobile).toBe(mobile);
    await rejected(request({ destination: { mobile: mobile + '3' } }), 'destination.mobile');
    await rejected(request({ destination: { mobile: '+0211234567' } }), 'destination.mobile');
    await rejected(request({ destination: { mobile: '64211234567' } }), 'destination.mobile');
    await rejected(request({ destination: { mobile: '+1' } }), 'destination.mobile');
  });

  it('accepts an e-mail address and refuses something else', async () => {
    expect((await accepted(request({ destination: { email: 'ana@example.co.nz' } }))).destination?.email).toBe('ana@example.co.nz');
    await rejected(request({ destination: { email: 'ana.example.co.nz' } }), 'destination.email');
  });

  it('accepts every destination property together', async () => {
    const sent = await accepted(request({ destination: { contact_id: UUID, mobile: '+64211234567', email: 'ana@example.com' } }));
    expect(sent.destination).toEqual({ contactId: UUID, mobile: '+64211234567', email: 'ana@example.com' });
  });

  it('accepts http and https URLs and refuses other schemes and non-URLs', async () => {
    const sent = await accepted(media({ type: 'image/png', url: 'https://cdn.example.com/a/b.png?size=2' }));
    expect(sent.message).toEqual({
      type: 'media',
      text: '',
      media: { mimeType: 'image/png', url: 'https://cdn.example.com/a/b.png?size=2' },
      template: undefined,
    });
    await accepted(media({ type: 'image/png', url: 'http://cdn.example.com/b.png' }));
    await rejected(media({ type: 'image/png', url: 'ftp://cdn.example.com/b.png' }), 'message.media.url');
    await rejected(media({ type: 'image/png', url: 'not a url' }), 'message.media.url');
    await rejected(media({ type: 'image/png' }), 'message.media.url');
  });

  it('says how to write a URL with characters outside ASCII when it refuses one', async () => {
    const refused = await rejected(media({ type: 'application/pdf', url: 'https://cdn.example.com/invoice Ōtautahi.pdf' }), 'message.media.url');
    expect(refused.errors.find((e: { field: string }) => e.field === 'message.media.url').description).toMatch(/percent-encoded/);
    await accepted(media({ type: 'application/pdf', url: 'https://cdn.example.com/invoice%20%C5%8Ctautahi.pdf' }));
  });

  it('accepts a 255-character MimeType and refuses 256 characters and other shapes', async () => {
    const mime = 'a/' + x(253, 'b');
    expect(mime).toHaveLength(255);
    await accepted(media({ type: mime, url: 'https://cdn.example.com/f' }));
    await accepted(media({ type: 'application/vnd.ms-excel+xml.v2', url: 'https://cdn.example.com/f' }));
    await rejected(media({ type: mime + 'b', url: 'https://cdn.example.com/f' }), 'message.media.type');
    await rejected(media({ type: 'image', url: 'https://cdn.example.com/f' }), 'message.media.type');
    await rejected(media({ type: 'image/png; q=1', url: 'https://cdn.example.com/f' }), 'message.media.type');
  });

  it('accepts a 256-character ShortString of letters, digits, space, hyphen and underscore and refuses 257 or other characters', async () => {
    const event = 'read_ok -' + x(247, 'Z');
    expect(event).toHaveLength(256);
    expect((await accepted(attempts({ channel: 'wab', event }))).attempts[0]?.event).toBe(event);
    await rejected(attempts({ channel: 'wab', event: event + 'Z' }), 'delivery_attempts[0].event');
    await rejected(attempts({ channel: 'wab', event: 'read!' }), 'delivery_attempts[0].event');
    await accepted(template({ parameters: [{ name: x(256), text: 'v' }] }));
    await rejected(template({ parameters: [{ name: x(257), text: 'v' }] }), 'message.template.parameters[0].name');
    await rejected(template({ parameters: [{ name: 'first.name', text: 'v' }] }), 'message.template.parameters[0].name');
  });

  it('refuses a text body of spaces, line breaks and invisible characters only, and takes one visible character among them (trial)', async () => {
    const res = await rejected(text(' \n\t\u200b\u00a0\u3000\u3164\uffa0\u2800\u200e\ufe0f\u2063 '), 'message.text.body');
    expect(res.errors).toContainEqual({
      field: 'message.text.body',
      code: 400,
      description: 'must not be blank: it holds only spaces, line breaks or invisible characters',
    });
    await accepted(text(' \n ā\t'));
    await accepted(text('。'));
    await accepted(text('\u2764\ufe0f'));
  });

  it('accepts a text body of 10000 characters with punctuation and refuses 10001, empty or control characters', async () => {
    expect((await accepted(text(x(10000)))).message?.text).toBe(x(10000));
    expect((await accepted(text(world(10000)))).message?.text).toBe(world(10000));
    await rejected(text(world(10001)), 'message.text.body');
    const prose = 'Kia ora, Ana! Your parcel (#42) arrives at 9:30 — track it: https://t.example/x?a=1.\nThanks 🙂';
    expect((await accepted(text(prose))).message?.text).toBe(prose);
    await rejected(text(x(10001)), 'message.text.body');
    await rejected(text(''), 'message.text.body');
    await rejected(text('bell\u0007'), 'message.text.body');
    // Named as v1, v2 and Campaign Manager name them; C1 controls (CSI, NEL) too, which no handset shows.
    expect((await rejected(text('Kia ora\u0000'), 'message.text.body')).message).toMatch(/U\+0000/);
    expect((await rejected(text('Tēnā koe \u009b31m'), 'message.text.body')).message).toMatch(/U\+009B/);
    expect((await rejected(text('一\u0085二'), 'message.text.body')).message).toMatch(/U\+0085/);
    await rejected(request({ message: { type: 'text', text: {} } }), 'message.text.body');
  });

  it('accepts 0 and 20 template parameters and refuses 21', async () => {
    const sent = await accepted(template({ language: 'en', parameters: params(20) }));
    expect(sent.message).toEqual({
      type: 'template',
      text: '',
      media: undefined,
      template: { templateId: TEMPLATE_ID, language: 'en', parameters: params(20) },
    });
    expect((await accepted(template({ parameters: [] }))).message?.template?.parameters).toEqual([]);
    expect((await accepted(template({}))).message?.template).toEqual({ templateId: TEMPLATE_ID, language: '', parameters: [] });
    await rejected(template({ parameters: params(21) }), 'message.template.parameters');
  });

  it('accepts template languages of 2 and 5 letters or underscores and refuses 1, 6 and digits', async () => {
    await accepted(template({ language: 'en' }));
    await accepted(template({ language: 'en_NZ' }));
    await rejected(template({ language: 'e' }), 'message.template.language');
    await rejected(template({ language: 'en_NZx' }), 'message.template.language');
    await rejected(template({ language: 'e1' }), 'message.template.language');
  });

  it('accepts template parameter text of 256 characters and refuses 257 or a missing one', async () => {
    const sent = await accepted(template({ parameters: [{ name: 'code', text: world(256) }] }));
    expect(sent.message?.template?.parameters).toEqual([{ name: 'code', text: world(256) }]);
    await rejected(
      template({
        parameters: [
          { name: 'a', text: 'Ka pai 👍🏽' },
          { name: 'code', text: world(257) },
        ],
      }),
      'message.template.parameters[1].text',
    );
    await rejected(template({ parameters: [{ name: 'a', text: 'Ka pai 👍🏽' }, { name: 'code' }] }), 'message.template.parameters[1].text');
  });

  it('refuses template parameter text with a control character, naming the parameter and the character', async () => {
    const body = await rejected(
      template({
        parameters: [
          { name: 'name', text: 'Ānaru\u001b[31mRED' },
          { name: 'order', text: 'A\u0000B' },
        ],
      }),
      'message.template.parameters[0].text',
    );
    const byField = Object.fromEntries(body.errors.map((e: { field: string; description: string }) => [e.field, e.description]));
    expect(byField['message.template.parameters[0].text']).toMatch(/"name".*U\+001B/);
    expect(byField['message.template.parameters[1].text']).toMatch(/"order".*U\+0000/);
    await rejected(template({ parameters: [{ name: 'code', text: '注文\u009b31m' }] }), 'message.template.parameters[0].text');
    // Line breaks and tabs are text, as in a text body.
    const lines = [{ name: 'address', text: '12 Kāinga St\nTāmaki Makaurau\t🏠' }];
    expect((await accepted(template({ parameters: lines }))).message?.template?.parameters).toEqual(lines);
  });

  it('refuses a template parameter name given twice, naming the repeat, since only one value can fill it (trial: SMS took the last, WhatsApp got both)', async () => {
    const body = await rejected(
      template({
        parameters: [
          { name: 'name', text: 'Ānaru' },
          { name: 'order', text: '注文 42' },
          { name: 'name', text: 'Mere 👋🏽' },
        ],
      }),
      'message.template.parameters[2].name',
    );
    const repeat = body.errors.find((e: { field: string }) => e.field === 'message.template.parameters[2].name');
    expect(repeat.description).toMatch(/"name".*parameters\[0\]/);
    // Names differing only in case are different placeholders.
    await accepted(
      template({
        parameters: [
          { name: 'name', text: 'Ānaru' },
          { name: 'Name', text: 'Mere' },
        ],
      }),
    );
  });

  it('accepts a reference of 255 characters and refuses 256', async () => {
    expect((await accepted(request({ reference: world(255) }))).reference).toBe(world(255));
    await rejected(request({ reference: world(256) }), 'reference');
  });

  it('refuses a reference with a control character, which callbacks carry back as detail, and keeps line breaks and tabs (review)', async () => {
    expect((await rejected(request({ reference: 'order\u0000\u001b[2J' }), 'reference')).message).toMatch(/U\+0000/);
    expect((await accepted(request({ reference: 'Tāmaki\n订单 #42\t🧾' }))).reference).toBe('Tāmaki\n订单 #42\t🧾');
  });

  it('accepts each scheduler pipe and refuses another', async () => {
    for (const pipe of ['dynamic', 'eventbridge', 'sqs']) expect((await accepted(request({ scheduler_pipe: pipe }))).schedulerPipe).toBe(pipe);
    await rejected(request({ scheduler_pipe: 'kafka' }), 'scheduler_pipe');
  });

  it('sends empty defaults for what the request leaves out', async () => {
    const sent = await accepted(request());
    expect(sent).toEqual({
      applicationId: 'app-1',
      destination: { contactId: '', mobile: '+64211234567', email: '' },
      message: { type: 'text', text: 'Kia ora Ānaru — Заказ #42 готов! 你好 👋🏽', media: undefined, template: undefined },
      attempts: [],
      reference: '',
      schedulerPipe: '',
      dedupKey: '',
    });
  });
});

describe('delivery attempts', () => {
  it('accepts 1 and 10 attempts and refuses 0 and 11', async () => {
    expect((await accepted(attempts({ channel: 'sms' }))).attempts).toHaveLength(1);
    const ten = Array.from({ length: 10 }, (_, i) => ({ channel: ['wab', 'sms', 'mms', 'email', 'rcs'][i % 5] }));
    expect((await accepted(attempts(...ten))).attempts.map((a) => a.channel)).toEqual(ten.map((a) => a.channel));
    await rejected(attempts(), 'delivery_attempts');
    await rejected(attempts(...ten, { channel: 'sms' }), 'delivery_attempts');
  });

  it('accepts timeouts of 0 and 604800 seconds and refuses -1, 604801 and fractions', async () => {
    expect((await accepted(attempts({ channel: 'wab', timeout: 0 }))).attempts).toEqual([{ channel: 'wab', event: '', timeout: 0 }]);
    expect((await accepted(attempts({ channel: 'wab', timeout: 604800 }))).attempts[0]?.timeout).toBe(604800);
    await rejected(attempts({ channel: 'wab', timeout: -1 }), 'delivery_attempts[0].timeout');
    await rejected(attempts({ channel: 'sms' }, { channel: 'wab', timeout: 604801 }), 'delivery_attempts[1].timeout');
    await rejected(attempts({ channel: 'wab', timeout: 1.5 }), 'delivery_attempts[0].timeout');
    await rejected(attempts({ channel: 'wab', timeout: '15' }), 'delivery_attempts[0].timeout');
  });

  it('unwraps labelled attempts and keeps bare ones, in order, a missing timeout left absent', async () => {
    const sent = await accepted(
      attempts({ first: { channel: 'wab', event: 'read', timeout: 15 } }, { channel: 'rcs', event: 'delivered' }, { last: { channel: 'sms' } }),
    );
    expect(sent.attempts).toEqual([
      { channel: 'wab', event: 'read', timeout: 15 },
      { channel: 'rcs', event: 'delivered', timeout: undefined },
      { channel: 'sms', event: '', timeout: undefined },
    ]);
    expect(sent.attempts[2]!.timeout).toBeUndefined();
  });

  it('reports a problem inside a labelled attempt under its label', async () => {
    await rejected(attempts({ first: { channel: 'wab' } }, { last: { channel: 'sms', timeout: 604801 } }), 'delivery_attempts[1].last.timeout');
    await rejected(attempts({ first: { channel: 'fax' } }), 'delivery_attempts[0].first.channel');
    await rejected(attempts({ first: { event: 'read' } }), 'delivery_attempts[0].first.channel');
  });

  it('refuses an unknown channel, a missing channel, unknown attempt fields and two labels in one item', async () => {
    await rejected(attempts({ channel: 'fax' }), 'delivery_attempts[0].channel');
    await rejected(attempts({ event: 'read' }), 'delivery_attempts[0].channel');
    await rejected(attempts({ channel: 'sms', timout: 5 }), 'delivery_attempts[0].timout');
    await rejected(attempts({ first: { channel: 'wab' }, last: { channel: 'sms' } }), 'delivery_attempts[0].channel');
    await rejected(attempts('sms'), 'delivery_attempts[0]');
  });
});

describe('destination and message shape', () => {
  it('refuses an empty destination, an unknown destination key, or none', async () => {
    await rejected(request({ destination: {} }), 'destination');
    await rejected(request({ destination: { phone: '+64211234567' } }), 'destination.phone');
    const { destination: _, ...noDestination } = request();
    await rejected(noDestination, 'destination');
  });

  it('refuses a message with only its type, and a type without its content', async () => {
    const body = await rejected(request({ message: { type: 'text' } }), 'message');
    expect(body.errors.map((e: { field?: string }) => e.field)).toContain('message.text');
    await rejected(request({ message: { type: 'media', text: { body: 'hi' } } }), 'message.media');
    await rejected(request({ message: { type: 'template', text: { body: 'hi' } } }), 'message.template');
    await rejected(request({ message: { text: { body: 'hi' } } }), 'message.type');
  });

  it('refuses an unknown message type', async () => {
    await rejected(request({ message: { type: 'sticker', text: { body: 'hi' } } }), 'message.type');
  });

  it('sends only the content the type names', async () => {
    const sent = await accepted(request({ message: { type: 'text', text: { body: 'hi' }, media: { type: 'image/png', url: 'https://x.example/a.png' } } }));
    expect(sent.message).toEqual({ type: 'text', text: 'hi', media: undefined, template: undefined });
  });

  it('ignores unknown top-level fields', async () => {
    await accepted(request({ callback_url: 'https://example.com/cb', source: 'Kōrero', priority: 'high' }));
  });

  it('refuses a field so close to a known one that the client meant it, naming the one meant (trial: deliveryAttempts went by the default chain)', async () => {
    const camel = await rejected(request({ deliveryAttempts: [{ channel: 'sms' }] }), 'deliveryAttempts');
    expect(camel.errors).toContainEqual({ field: 'deliveryAttempts', code: 400, description: 'is not a known field; did you mean delivery_attempts?' });
    await rejected(request({ refrence: 'tēnā koe 👋🏽' }), 'refrence');
    await rejected(request({ 'Scheduler-Pipe': 'sqs' }), 'Scheduler-Pipe');
    await rejected(template({ langauge: 'mi' }), 'message.template.langauge');
    await rejected(template({ parameters: [{ name: 'ingoa', text: 'Ānaru' }], tempalte_id: TEMPLATE_ID }), 'message.template.tempalte_id');
    // A word of its own beside a known one is not a slip (review): `consent`, `references`.
    await accepted(request({ consent: true, references: ['kōwhai-42'] }));
  });

  it('refuses a body that is not an object, without naming a field', async () => {
    const res = await server.post([request()]);
    expect(res.status).toBe(400);
    expect(res.json.errors).toHaveLength(1);
    expect(res.json.errors[0].field).toBeUndefined();
    expect(res.json.errors[0].description).toMatch(/object/);
  });

  it('lists each offending field once, at most 100 entries', async () => {
    const one = await rejected(request({ destination: { mobile: '+0' + x(20, '1') } }), 'destination.mobile');
    expect(one.errors).toHaveLength(1);
    expect(one.errors[0].description).toMatch(/16/);
    expect(one.errors[0].description).toMatch(/E\.164/);

    const many = Array.from({ length: 60 }, () => ({ channel: 'fax', timeout: -1 }));
    const body = await rejected(request({ destination: {}, delivery_attempts: many }), 'delivery_attempts');
    const fields = body.errors.map((e: { field?: string }) => e.field);
    expect(fields).toHaveLength(100);
    expect(new Set(fields).size).toBe(fields.length);
    expect(fields).toEqual(expect.arrayContaining(['destination', 'delivery_attempts[0].channel', 'delivery_attempts[0].timeout']));
  });
});
