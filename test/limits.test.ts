import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { seriesSum } from './support/metric-samples';

const DAY = 86_400_000;

/** The instant `t` written as RFC 3339 local time at a UTC offset of `hours`. */
const withOffset = (t: number, hours: number): string => new Date(t + hours * 3_600_000).toISOString().slice(0, 19) + `+${String(hours).padStart(2, '0')}:00`;

/** Each limit at its edge (accepted) and one past it (refused in the interface's own error shape). */
describe('limits of SMS Gateway v2 and Gateway v1', () => {
  let hermod: HermodProcess;
  let client: Client;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-limits-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1' } });
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
  });

  afterAll(async () => {
    client?.close();
    await hermod?.stop();
  });

  const base = { destination: '+6421000001', content: 'Kia ora, e hoa mā' };
  // Limits count characters (code points), not UTF-16 units or bytes: 👋🏽 is two characters, four UTF-16 units, eight UTF-8 bytes.
  const world = (n: number): string =>
    Array.from('Kia ora, e hoa mā — tēnā koe. Привет, 你好世界 👋🏽🎉 '.repeat(Math.ceil(n / 40) + 1))
      .slice(0, n)
      .join('');
  const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['destination of 15 digits', { destination: '+' + '6'.repeat(15) }, { destination: '+' + '6'.repeat(16) }],
    ['destination of 7 digits', { destination: '+6421000' }, { destination: '+642100' }],
    ['content of 1600 characters', { content: world(1600) }, { content: world(1601) }],
    ['content of 1600 emoji', { content: '🎉'.repeat(1600) }, { content: '🎉'.repeat(1601) }],
    ['content of 1 character', { content: 'ā' }, { content: '' }],
    // Spaces, line breaks and invisible characters alone reach a handset as a blank message (trial).
    ['content of one visible character among spaces', { content: ' \n ā\t' }, { content: ' \n\t\u200b\u00a0 ' }],
    // Senders stay printable ASCII, all an SMSC can send from (test/sender-addresses.test.ts has the rest).
    ['source of 16 characters', { source: '+' + '6'.repeat(15) }, { source: '+' + '6'.repeat(16) }],
    ['alphanumeric source of 11 characters', { source: 'KiaOra-Aroa' }, { source: 'KiaOra-Aroha' }],
    ['reference of 255 characters', { reference: world(255) }, { reference: world(256) }],
    ['class of 32 characters', { class: world(32) }, { class: world(33) }],
    ['alphanumeric mask of 11 characters', { mask: 'm'.repeat(11) }, { mask: 'm'.repeat(12) }],
    // A mask may be the business's number, as a source may (only an alphanumeric sender is limited to 11).
    ['mask as a number of 15 digits', { mask: '+' + '6'.repeat(15) }, { mask: '+' + '6'.repeat(16) }],
    [
      'scheduled 60 days ahead less a minute',
      { scheduled: new Date(Date.now() + 60 * DAY - 60_000).toISOString() },
      { scheduled: new Date(Date.now() + 60 * DAY + 60_000).toISOString() },
    ],
    ['scheduled with an offset', { scheduled: withOffset(Date.now() + 30 * DAY, 13) }, { scheduled: '2026-13-01T00:00:00Z' }],
  ];

  for (const [what, ok, bad] of cases) {
    it(`v2 accepts ${what} and refuses one past it`, async () => {
      const accepted = await client.post('/rest/sms/v2/messages', { ...base, ...ok });
      expect(accepted.status, JSON.stringify(accepted.json)).toBe(202);
      const refused = await client.post('/rest/sms/v2/messages', { ...base, ...bad });
      expect(refused.status).toBe(400);
      expect(refused.json).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.any(String) });
    });

    it(`v1 accepts ${what} and refuses one past it`, async () => {
      const accepted = await client.post('/rest/gateway/messages', { ...base, ...ok });
      expect(accepted.status, JSON.stringify(accepted.json)).toBe(201);
      const refused = await client.post('/rest/gateway/messages', { ...base, ...bad });
      expect(refused.status).toBe(400);
      expect(refused.json).toMatchObject({ code: 400, error: expect.stringMatching(/^(invalid_attrib|missing_attrib)$/), 'error-desc': expect.any(String) });
    });
  }

  it('v2 and v1 refuse a field so close to a known one that the client meant it (a send meant for later would go now), in their own shapes, and ignore others', async () => {
    const later = new Date(Date.now() + 2 * DAY).toISOString();
    const v2 = await client.post('/rest/sms/v2/messages', { ...base, schedule: later });
    expect(v2.status).toBe(400);
    expect(v2.json).toEqual({ statusCode: 400, error: 'Bad Request', message: 'schedule: is not a known field; did you mean scheduled?' });
    const v1 = await client.post('/rest/gateway/messages', { ...base, Scheduled: later });
    expect(v1.status).toBe(400);
    expect(v1.json).toMatchObject({ code: 400, error: 'invalid_attrib', 'error-desc': 'Scheduled: is not a known field; did you mean scheduled?' });
    const broadcast = await client.post('/rest/gateway/messages/broadcast', { content: 'Kia ora 👋🏽', destination: ['+6421000002'], refrence: 'hui-42' });
    expect(broadcast.status).toBe(400);
    expect(broadcast.json['error-desc']).toBe('refrence: is not a known field; did you mean reference?');
    // A field of the client's own, not a slip of a known one, is ignored as before.
    expect(
      (await client.post('/rest/sms/v2/messages', { ...base, customer_ref: 'kōwhai-42', campaign: 'Matariki', consent: true, context: 'hui' })).status,
    ).toBe(202);
    expect((await client.post('/rest/gateway/messages', { ...base, customer_ref: 'kōwhai-42' })).status).toBe(201);
  });

  it('v2 takes sms_class 1 to 3, as v1 does, refusing 0 and 4, and an integration_id that is a UUID', async () => {
    expect((await client.post('/rest/sms/v2/messages', { ...base, sms_class: 3, integration_id: '8a1e7c52-3b0e-4a51-9d63-0b7e6f1e2a10' })).status).toBe(202);
    expect((await client.post('/rest/sms/v2/messages', { ...base, sms_class: 1 })).status).toBe(202);
    for (const sms_class of [0, 4]) {
      const v2 = await client.post('/rest/sms/v2/messages', { ...base, sms_class });
      expect(v2.status, v2.text).toBe(400);
      expect(v2.json).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringContaining('sms_class') });
      const v1 = await client.post('/rest/gateway/messages', { ...base, sms_class });
      expect(v1.status, v1.text).toBe(400);
      expect(v1.json).toMatchObject({ code: 400, error: 'invalid_attrib', message: expect.stringContaining('sms_class') });
    }
    expect((await client.post('/rest/sms/v2/messages', { ...base, integration_id: 'not-a-uuid' })).status).toBe(400);
  });

  it('refuses a body larger than the configured maximum with 413', async () => {
    const r = await client.request('POST', '/rest/sms/v2/messages', {
      raw: JSON.stringify({ ...base, content: '你'.repeat(400_000) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ statusCode: 413 });
  });
});

/** What came back on one raw connection, read until the server closed it. */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `pieces` on a connection of its own, a few milliseconds apart, and reads until the server closes it. */
function exchange(socket: net.Socket, pieces: string[]): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const received: Buffer[] = [];
    socket.on('data', (d: Buffer) => received.push(d));
    // A reset after the answer came (the server closed while pieces were still on their way) is no failure.
    socket.on('error', (err) => (received.length > 0 ? undefined : reject(err)));
    socket.on('close', () => {
      const text = Buffer.concat(received).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    void (async () => {
      for (const piece of pieces) {
        // The server may have answered and closed already: what is left is not sent.
        if (!socket.writable) return;
        socket.write(piece);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
  });
}

/** A request whose headers, in te reo Māori, CJK and emoji, exceed Node's 16 KB limit. */
const oversized = (method: string, path: string): string[] => [
  `${method} ${path} HTTP/1.1\r\nhost: localhost\r\nauthorization: Basic YWNtZTpzZWNyZXQ=\r\n`,
  ...Array.from({ length: 12 }, (_, i) => `x-kia-ora-${i}: ${encodeURIComponent('Kia ora, e hoa mā 👋🏽 你好 ').repeat(20)}\r\n`),
  '\r\n',
];

/** The same, over the parser's own limit (64 KB): refused before any listener sees the request. */
const huge = (method: string, path: string): string[] => [
  `${method} ${path} HTTP/1.1\r\nhost: localhost\r\n`,
  ...Array.from({ length: 48 }, (_, i) => `x-kia-ora-${i}: ${encodeURIComponent('Kia ora, e hoa mā 👋🏽 你好 ').repeat(20)}\r\n`),
  '\r\n',
];

describe('request headers over the gateway’s 16 KB limit', () => {
  let hermod: HermodProcess;
  let ca: string;
  const overTls = (pieces: string[]): Promise<RawAnswer> =>
    exchange(tls.connect({ host: '127.0.0.1', port: hermod.httpsPort, ca, servername: 'localhost' }), pieces);

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-headers-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1' } });
    ca = hermod.ca();
  });

  afterAll(async () => {
    await hermod?.stop();
  });

  it.each([
    [
      'SMS Gateway v2',
      'GET',
      '/rest/sms/v2/messages?id=00000000-0000-4000-8000-000000000000',
      { message: /16384 bytes/, statusCode: 431, error: 'Request Header Fields Too Large' },
    ],
    ['Gateway v1', 'POST', '/rest/gateway/messages', { message: /16384 bytes/, code: 431, error: 'invalid_attrib', 'error-desc': /16384 bytes/ }],
    ['Campaign Manager', 'POST', '/rest/campaign_manager/v1/acme/lists', { code: 431, message: /16384 bytes/ }],
    [
      'Intelligent Messaging',
      'POST',
      '/rest/im/v1/message',
      { code: 431, message: /16384 bytes/, errors: [{ code: 431, description: /16384 bytes/ }], statusCode: 431, error: 'Request Header Fields Too Large' },
    ],
  ])('are answered 431 on %s in its own error shape, and the connection is closed', async (_name, method, path, shape) => {
    const r = await overTls(oversized(method, path));
    expect(r.status, r.body).toBe(431);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.headers.connection).toBe('close');
    expect(JSON.parse(r.body)).toEqual(matching(shape));
  });

  it('are answered in plain text on a Campaign Manager delete, whose errors are plain text', async () => {
    const r = await overTls(oversized('DELETE', '/rest/campaign_manager/v1/acme/lists/1'));
    expect(r.status, r.body).toBe(431);
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.body).toBe('error: request headers are larger than 16384 bytes');
  });

  it('are answered 431 in the JSON any client reads outside every interface, and on the plain HTTP port', async () => {
    const outside = await overTls(oversized('GET', '/kia-ora'));
    expect(outside.status, outside.body).toBe(431);
    expect(JSON.parse(outside.body)).toEqual({
      message: 'request headers are larger than 16384 bytes',
      statusCode: 431,
      error: 'Request Header Fields Too Large',
      code: 431,
    });

    const plain = await exchange(net.connect({ host: '127.0.0.1', port: hermod.httpPort }), [oversized('GET', '/rest/sms/v2/messages').join('')]);
    expect(plain.status, plain.body).toBe(431);
    expect(JSON.parse(plain.body)).toEqual({
      message: 'request headers are larger than 16384 bytes',
      statusCode: 431,
      error: 'Request Header Fields Too Large',
    });
  });

  it('are answered 431 when they are over 16 KB in many small fields, however many fields they come in', async () => {
    const many = [
      'GET /rest/sms/v2/messages?id=x HTTP/1.1\r\nhost: localhost\r\nauthorization: Basic YWNtZTpzZWNyZXQ=\r\n',
      ...Array.from({ length: 14 }, (_, i) => Array.from({ length: 100 }, (_, j) => `x-${i}-${j}: mā\r\n`).join('')),
      '\r\n',
    ];
    const r = await overTls(many);
    expect(r.status, r.body).toBe(431);
    expect(JSON.parse(r.body)).toEqual(matching({ message: /16384 bytes/, statusCode: 431, error: 'Request Header Fields Too Large' }));
    expect(r.headers.connection).toBe('close');
  });

  it('are answered 431 in the interface’s shape, and the connection closed, when they pass even the parser’s 64 KB (trial)', async () => {
    // The parser fails on a later chunk than the request line's (TLS reads come in records of at most 16 KB): the
    // connection's first chunk names the interface.
    const v2 = await overTls(huge('POST', '/rest/sms/v2/messages'));
    expect(v2.status, v2.body).toBe(431);
    expect(JSON.parse(v2.body)).toEqual(matching({ message: /16384 bytes/, statusCode: 431, error: 'Request Header Fields Too Large' }));
    expect(v2.headers.connection).toBe('close');
    const im = await overTls(huge('POST', '/rest/im/v1/message'));
    expect(im.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(im.body)).toMatchObject({ code: 431 });
    const outside = await overTls(huge('GET', '/kia-ora'));
    expect(JSON.parse(outside.body)).toEqual({
      message: 'request headers are larger than 16384 bytes',
      statusCode: 431,
      error: 'Request Header Fields Too Large',
      code: 431,
    });
  });

  it('are counted in the gateway’s request metrics under their interface and 431, both those over 16 KB and those over the parser’s 64 KB', async () => {
    const count = async (labels: string): Promise<number> => {
      const text = await (await fetch(`http://127.0.0.1:${hermod.metricsPort}/metrics`)).text();
      return seriesSum(text, `hermod_http_requests_total{${labels}}`) || 0;
    };
    const v1 = 'interface="gateway_v1",route="unmatched",method="POST",status="431"';
    const v2 = 'interface="sms_v2",route="unmatched",method="GET",status="431"';
    const before = { v1: await count(v1), v2: await count(v2) };
    await overTls(oversized('POST', '/rest/gateway/messages'));
    await overTls(huge('GET', '/rest/sms/v2/messages'));
    expect(await count(v1)).toBe(before.v1 + 1);
    // Over 64 KB, the parser fails on a later chunk than the request line's: the connection's first chunk names it.
    expect(await count(v2)).toBe(before.v2 + 1);
  });

  it('leave the gateway answering requests of ordinary size', async () => {
    await overTls(oversized('POST', '/rest/sms/v2/messages'));
    const client = createClient(hermod.baseUrl, ca, { user: 'acme', pass: 'secret' });
    try {
      const r = await client.post('/rest/sms/v2/messages', { destination: '+6421000001', content: 'Kia ora, e hoa mā 👋🏽 你好' });
      expect(r.status, r.text).toBe(202);
    } finally {
      client.close();
    }
  });
});

/** `shape` with its regular expressions as string matchers. */
function matching(shape: unknown): unknown {
  if (shape instanceof RegExp) return expect.stringMatching(shape);
  if (Array.isArray(shape)) return shape.map(matching);
  if (shape && typeof shape === 'object') return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, matching(v)]));
  return shape;
}

describe('a request that asks before sending its body (Expect: 100-continue)', () => {
  let hermod: HermodProcess;
  let ca: string;
  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-continue-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1' } });
    ca = hermod.ca();
  });
  afterAll(async () => hermod?.stop());

  /** Sends the head, then, once the gateway answers 100 Continue, the body; resolves with every answer's status line, in order. */
  const askFirst = (path: string, body: string, declared = Buffer.byteLength(body)): Promise<string[]> =>
    new Promise((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: hermod.httpsPort, ca, servername: 'localhost' });
      let text = '';
      let sent = false;
      const lines = (): string[] => text.split('\r\n').filter((l) => l.startsWith('HTTP/1.1 '));
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => {
        text += d;
        if (!sent && lines()[0]?.startsWith('HTTP/1.1 100')) {
          sent = true;
          socket.write(body);
        }
        if (lines().some((l) => !l.startsWith('HTTP/1.1 100')) && text.includes('}')) socket.end();
      });
      socket.on('close', () => resolve(lines()));
      socket.on('error', reject);
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: localhost\r\nauthorization: Basic ${Buffer.from('acme:secret').toString('base64')}\r\n` +
          `content-type: application/json\r\ncontent-length: ${declared}\r\nexpect: 100-continue\r\n\r\n`,
      );
    });

  it('is told 413 at once when the body it announces is over the limit, and never asked for it with 100 Continue', async () => {
    const lines = await askFirst('/rest/sms/v2/messages', '', 5 * 1024 * 1024);
    expect(lines).toEqual(['HTTP/1.1 413 Payload Too Large']);
  });

  it('is asked for a body within the limit with 100 Continue, and its message is accepted', async () => {
    const lines = await askFirst('/rest/sms/v2/messages', JSON.stringify({ destination: '+6421000001', content: 'Kia ora, e hoa mā 👋🏽 你好' }));
    expect(lines).toEqual(['HTTP/1.1 100 Continue', 'HTTP/1.1 202 Accepted']);
  });
});
