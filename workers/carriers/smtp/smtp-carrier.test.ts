import { describe, expect, it } from 'vitest';
import { HermodError } from '../../../lib/errors';
import type { CarrierReport } from '../../carrier';
import { eventually } from '../../../test/support/eventually';
import { emailJob, smtpTestKit } from './smtp-test-kit';

const kit = smtpTestKit();

async function sendFailure(promise: Promise<unknown>): Promise<HermodError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HermodError);
  return err as HermodError;
}

describe('SMTP carrier', () => {
  it('delivers a text mail with its subject, body and Hermod headers, and reports it received', async () => {
    const sink = await kit.sink();
    const carrier = kit.carrier(sink.port);
    const reports: CarrierReport[] = [];
    carrier.onReport((r) => void reports.push(r));
    const job = emailJob({
      content: 'Ko tō waehere ko 4711 — ваш код.\n10 分钟后过期 ⏳',
      im: { type: 'text', subject: 'Tō waehere — 你的代码 🔑', reference: 'заказ-42' },
    });

    const { carrierIds } = await carrier.send(job);

    expect(sink.mails).toHaveLength(1);
    const mail = sink.mails[0]!;
    expect(mail).toMatchObject({
      from: 'hermod@localhost',
      to: ['ada@example.com'],
      subject: 'Tō waehere — 你的代码 🔑',
      text: job.content,
      messageId: carrierIds[0],
    });
    expect(mail.headers['x-hermod-message-id']).toBe(job.id);
    expect(mail.headers['x-hermod-reference']).toBe('заказ-42');
    const report = await eventually(() => reports[0]);
    expect(report).toMatchObject({ carrierId: carrierIds[0], status: 'received', errorCode: '' });
  });

  it("gives a mail sent again the same Message-ID, from the job's id, so the recipient's mail system drops the copy", async () => {
    const sink = await kit.sink();
    const carrier = kit.carrier(sink.port);
    const job = emailJob({ content: 'Kia ora anō — 再次 🔁', im: { type: 'text', subject: 'Anō' } });
    // Sent again: its relay's answer after the data was lost (a timeout, a worker killed before it stored the outcome).
    const [first, again] = [await carrier.send(job), await carrier.send(job)];
    expect(sink.mails).toHaveLength(2);
    expect(sink.mails[0]!.messageId).toBe(`<${job.id}@localhost>`);
    expect(sink.mails[1]!.messageId).toBe(sink.mails[0]!.messageId);
    expect(again.carrierIds).toEqual(first.carrierIds);
    // Another job's mail has its own.
    await carrier.send(emailJob({ content: 'Tētahi atu' }));
    expect(sink.mails[2]!.messageId).not.toBe(sink.mails[0]!.messageId);
  });

  it('sends from the job source when it is an address, and from the configured sender otherwise', async () => {
    const sink = await kit.sink();
    const carrier = kit.carrier(sink.port, { from: 'noreply@hermod.example' });

    await carrier.send(emailJob({ source: 'billing@shop.example' }));
    await carrier.send(emailJob({ source: 'Tauhokohoko Māori' }));

    expect(sink.mails.map((m) => m.from)).toEqual(['billing@shop.example', 'noreply@hermod.example']);
    expect(sink.mails.map((m) => m.subject)).toEqual(['Message', 'Message']);
    expect(sink.mails[0]!.headers['x-hermod-reference']).toBeUndefined();
  });

  it('sends from a configured sender with a display name, its envelope the address inside the angle brackets', async () => {
    const sink = await kit.sink();
    const carrier = kit.carrier(sink.port, { from: 'Kāinga Ōra 🏠 <noreply@hermod.example>' });

    await carrier.send(emailJob({ source: 'Kāinga Ōra' }));

    expect(sink.mails[0]!.from).toBe('noreply@hermod.example');
    expect(sink.mails[0]!.headers.from).toContain('noreply@hermod.example');
  });

  it('keeps UTF-8 text and subjects intact, emoji and accents included', async () => {
    const sink = await kit.sink();
    const carrier = kit.carrier(sink.port);
    const content = 'Grüße aus Zürich, déjà vu à la café — 😀 🇳🇿 ñ ø ß. '.repeat(8) + '\nZweite Zeile: 日本語';
    const subject = 'Ça marche? Größe 😀 '.repeat(4).trim();

    await carrier.send(emailJob({ content, im: { type: 'text', subject } }));

    expect(sink.mails[0]).toMatchObject({ subject, text: content });
  });

  it('keeps a subject that looks like an encoded word as the text it is, not what it would decode to', async () => {
    const sink = await kit.sink();
    const carrier = kit.carrier(sink.port);
    for (const subject of ['=?UTF-8?B?SGFjaw==?= literal encoded-word', 'Kia ora =?iso-8859-1?q?caf=E9?= — tēnā koe 👋🏽 '.repeat(3).trim()]) {
      await carrier.send(emailJob({ content: 'Kia ora', im: { type: 'text', subject } }));
      expect(sink.mails.at(-1)!.subject).toBe(subject);
    }
  });

  it('puts the link of a media message on its own line instead of attaching the file', async () => {
    const sink = await kit.sink();
    const carrier = kit.carrier(sink.port);
    const url = 'https://cdn.example.com/pictures/cat.png?size=large';

    await carrier.send(emailJob({ content: 'Titiro ki tēnei — 看这个 👀', im: { type: 'media', media: { mimeType: 'image/png', url } } }));
    await carrier.send(emailJob({ content: '', im: { type: 'media', media: { mimeType: 'image/png', url } } }));
    // A media message without text of its own: intake makes its link its text, which the mail says once.
    await carrier.send(emailJob({ content: url, im: { type: 'media', media: { mimeType: 'image/png', url } } }));

    expect(sink.mails.map((m) => m.text)).toEqual([`Titiro ki tēnei — 看这个 👀\n${url}`, url, url]);
    expect(sink.mails[0]!.headers['content-type']).toMatch(/^text\/plain/);
  });

  it('rejects for good, without a report, when the server refuses the mailbox with a 5xx', async () => {
    const sink = await kit.sink();
    const carrier = kit.carrier(sink.port);
    const reports: CarrierReport[] = [];
    carrier.onReport((r) => void reports.push(r));

    const err = await sendFailure(carrier.send(emailJob({ destination: 'ada+bounce@example.com' })));

    expect(err).toMatchObject({ code: 'carrier_rejected', retryable: false });
    expect(err.message).toContain('550 5.1.1 mailbox unavailable');
    await new Promise((r) => setImmediate(r));
    expect(reports).toEqual([]);
    expect(sink.mails).toEqual([]);
  });

  it('fails transiently when the server defers the mailbox with a 4xx', async () => {
    const sink = await kit.sink();
    const carrier = kit.carrier(sink.port);

    const err = await sendFailure(carrier.send(emailJob({ destination: 'ada+defer@example.com' })));

    expect(err).toMatchObject({ code: 'carrier_transient', retryable: true });
    expect(err.message).toContain('451 4.3.0 try again later');
  });

  it('fails transiently when the server cannot be reached, and still becomes ready', async () => {
    const sink = await kit.sink();
    const port = sink.port;
    await sink.stop();
    const carrier = kit.carrier(port);

    await carrier.ready();
    const err = await sendFailure(carrier.send(emailJob()));

    expect(err).toMatchObject({ code: 'carrier_transient', retryable: true });
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('delivers many concurrent sends over its connection pool', async () => {
    const sink = await kit.sink();
    const carrier = kit.carrier(sink.port, { maxConnections: 3 });
    const jobs = Array.from({ length: 25 }, (_, i) => emailJob({ destination: `user${i}@example.com`, content: `Kia ora ${i} — 你好 👋🏽` }));

    const results = await Promise.all(jobs.map((j) => carrier.send(j)));

    expect(sink.mails).toHaveLength(25);
    expect(new Set(results.map((r) => r.carrierIds[0])).size).toBe(25);
    const byId = new Map(sink.mails.map((m) => [m.headers['x-hermod-message-id'], m]));
    for (const j of jobs) expect(byId.get(j.id)).toMatchObject({ to: [j.destination], text: j.content });
  });
});

describe('SMTP carrier bounces', () => {
  it('sends each mail with its own return path, and reports failed when the relay bounces it after taking it', async () => {
    let bouncePort = 0;
    const sink = await kit.sink({ bounceTo: () => ({ host: 'localhost', port: bouncePort }), bounceDelayMs: 20 });
    const carrier = kit.carrier(sink.port, {
      bounceDomain: 'localhost',
      bounceSecret: 'ka-pai-a-secret-for-this-test-only',
      bounceListener: { host: '127.0.0.1', port: 0 },
    });
    const reports: CarrierReport[] = [];
    carrier.onReport(async (r) => void reports.push(r));
    bouncePort = (await carrier.startBounceListener())!.port;
    const job = emailJob({ destination: 'tane+late-bounce@example.org' });

    const { carrierIds } = await carrier.send(job);

    expect(sink.mails[0]!.from).toMatch(new RegExp(`^bounces\\+${job.id}=[0-9a-f]{12}@localhost$`));
    const failed = await eventually(() => reports.find((r) => r.status === 'failed'), 3000);
    expect(reports[0]).toMatchObject({ carrierId: carrierIds[0], status: 'received' });
    expect(failed).toMatchObject({ messageId: job.id, status: 'failed', errorCode: '5.1.1' });
    expect(failed.detail).toContain('User unknown');
  });
});
