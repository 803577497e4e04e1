import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Reply } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { basic, openPost, postBytes } from './support/raw-request';

const CM = '/rest/campaign_manager/v1/acme';
const WORLD = 'Kia ora, e hoa mā — tēnā koe · Привет · 你好世界 · 👋🏽🎉';
/** Short enough for a list member's param1 (50 characters). */
const SHORT = 'Tēnā koe — Привет 你好世界 👋🏽🎉';
/** The UTF-8 byte-order mark some Windows tools put before a body. */
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** One interface: where to post, a body around `text` (already JSON-escaped), and its error shape. */
interface Interface {
  name: string;
  path: string;
  body(text: string): string;
  error(r: Reply, status: number, message: RegExp): void;
}

const INTERFACES: Interface[] = [
  {
    name: 'SMS Gateway v2',
    path: '/rest/sms/v2/messages',
    body: (text) => `{"destination":"+6421000001","content":"${text}"}`,
    error: (r, status, message) => expect(r.json, r.text).toEqual({ message: expect.stringMatching(message), statusCode: status, error: expect.any(String) }),
  },
  {
    name: 'Gateway v1',
    path: '/rest/gateway/messages',
    body: (text) => `{"destination":"+6421000001","content":"${text}"}`,
    error: (r, status, message) =>
      expect(r.json, r.text).toEqual({
        message: expect.stringMatching(message),
        code: status,
        error: expect.any(String),
        'error-desc': expect.stringMatching(message),
      }),
  },
  {
    name: 'Campaign Manager lists',
    path: `${CM}/lists`,
    body: (text) => `{"name":"encoding","members":[{"destination":"+6421000001","param1":"${text}"}]}`,
    error: (r, status, message) => expect(r.json, r.text).toEqual({ code: status, message: expect.stringMatching(message) }),
  },
  {
    name: 'Campaign Manager campaigns',
    path: `${CM}/scheduled_campaigns`,
    body: (text) =>
      `{"name":"encoding","schedule":"${new Date(Date.now() + 86_400_000).toISOString()}","content":"${text}","members":[{"destination":"+6421000001"}]}`,
    error: (r, status, message) => expect(r.json, r.text).toEqual({ code: status, message: expect.stringMatching(message) }),
  },
  {
    name: 'Intelligent Messaging',
    path: '/rest/im/v1/message',
    body: (text) => `{"destination":{"mobile":"+6421000001"},"message":{"type":"text","text":{"body":"${text}"}},"delivery_attempts":[{"channel":"sms"}]}`,
    error: (r, status, message) =>
      expect(r.json, r.text).toMatchObject({
        code: status,
        message: expect.stringMatching(message),
        errors: [{ code: status, description: expect.stringMatching(message) }],
        statusCode: status,
        error: expect.any(String),
      }),
  },
];

describe('request text must be UTF-8, on every interface', () => {
  let hermod: HermodProcess;
  let ca: string;
  const post = (path: string, bytes: Buffer, type = 'application/json', headers: Record<string, string> = {}): Promise<Reply> =>
    postBytes(hermod.baseUrl, ca, path, bytes, { authorization: basic('acme', 'secret'), 'content-type': type, ...headers });

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-encoding-'));
    hermod = await startHermod({ dataDir });
    ca = hermod.ca();
  });

  afterAll(async () => {
    if (hermod) expect(await hermod.stop()).toBe(0);
  });

  describe.each(INTERFACES)('$name', (api) => {
    it('refuses a body declared as ISO-8859-1 with 415 instead of turning é into U+FFFD', async () => {
      const bytes = Buffer.from(api.body('caf\xe9'), 'latin1');
      const r = await post(api.path, bytes, 'application/json; charset=iso-8859-1');
      expect(r.status, r.text).toBe(415);
      api.error(r, 415, /charset must be utf-8.*iso-8859-1/);
    });

    it('refuses bytes that are not UTF-8 with 400, naming the byte', async () => {
      const bytes = Buffer.from(api.body('caf\xe9'), 'latin1');
      const r = await post(api.path, bytes);
      expect(r.status, r.text).toBe(400);
      api.error(r, 400, new RegExp(`body is not valid UTF-8 at byte ${bytes.indexOf(0xe9)}$`));
    });

    it('refuses a lone surrogate escape with 400: no handset alphabet can carry half an emoji', async () => {
      const r = await post(api.path, Buffer.from(api.body('bad \\ud83d surrogate')));
      expect(r.status, r.text).toBe(400);
      api.error(r, 400, /lone surrogate \\ud83d/);
    });

    it('refuses a lone surrogate nested 60 arrays deep with 400 naming it, and one 5,000 deep with 400 too, not a 500 from a stack overflow', async () => {
      const body = api.body('Kia ora');
      const nested = (depth: number) => `${'['.repeat(depth)}"\\ud83d"${']'.repeat(depth)}`;
      const r = await post(api.path, Buffer.from(`${body.slice(0, -1)},"x":${nested(60)}}`));
      expect(r.status, r.text).toBe(400);
      api.error(r, 400, /lone surrogate \\ud83d/);
      // Refused for its depth before it is parsed (SMS v2, v1, IM), or for the surrogate (a Campaign Manager field).
      const deep = await post(api.path, Buffer.from(`${body.slice(0, -1)},"x":${nested(5000)}}`));
      api.error(deep, 400, /lone surrogate \\ud83d|nests deeper than 64 levels/);
    });

    it('accepts a body that starts with a UTF-8 byte-order mark, as RFC 8259 §8.1 lets a parser', async () => {
      const r = await post(api.path, Buffer.concat([BOM, Buffer.from(api.body(SHORT))]));
      expect([201, 202], r.text).toContain(r.status);
    });

    it('refuses a gzip body with 415 and Accept-Encoding: identity instead of reading it as broken UTF-8', async () => {
      const r = await post(api.path, gzipSync(api.body(SHORT)), 'application/json', { 'content-encoding': 'gzip' });
      expect(r.status, r.text).toBe(415);
      expect(r.headers['accept-encoding']).toBe('identity');
      api.error(r, 415, /^Content-Encoding gzip is not supported: send the body uncompressed$/);
    });

    it('accepts a body labelled Content-Encoding: Identity, which is no coding at all', async () => {
      const r = await post(api.path, Buffer.from(api.body(SHORT)), 'application/json', { 'content-encoding': 'Identity' });
      expect([201, 202], r.text).toContain(r.status);
    });

    it('accepts world text, escaped emoji pairs included, declared as charset=UTF-8', async () => {
      const r = await post(api.path, Buffer.from(api.body(`${SHORT} \\ud83d\\udc4b`)), 'application/json; charset="UTF-8"');
      expect([201, 202], r.text).toContain(r.status);
    });
  });

  it('accepts a byte-order mark before a Gateway v1 broadcast and a Campaign Manager delete of lists too', async () => {
    const broadcast = await post('/rest/gateway/messages/broadcast', Buffer.concat([BOM, Buffer.from(`{"destination":["+6421000004"],"content":"${SHORT}"}`)]));
    expect(broadcast.status, broadcast.text).toBe(201);
    const list = await post(`${CM}/lists`, Buffer.from(`{"name":"Kia ora, e hoa mā","members":[{"destination":"+6421000005","param1":"你好 👋🏽"}]}`));
    expect(list.status, list.text).toBe(201);
    const deleted = await post(`${CM}/delete_multiple_lists`, Buffer.concat([BOM, Buffer.from(`{"list_ids":[${list.json.id}]}`)]));
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.json).toEqual({ list_ids: [list.json.id], message: 'IDs of deleted lists' });
  });

  it('refuses a compressed Gateway v1 broadcast and Campaign Manager delete of lists too, the delete in its plain text', async () => {
    const upperCase = { 'content-encoding': 'GZIP' };
    const broadcast = await post(
      '/rest/gateway/messages/broadcast',
      gzipSync(`{"destination":["+6421000006"],"content":"${SHORT}"}`),
      'application/json',
      upperCase,
    );
    expect(broadcast.status, broadcast.text).toBe(415);
    expect(broadcast.json).toMatchObject({ code: 415, message: 'Content-Encoding GZIP is not supported: send the body uncompressed' });
    const deleted = await post(`${CM}/delete_multiple_lists`, Buffer.from('{"list_ids":[1]}'), 'application/json', { 'content-encoding': 'identity, br' });
    expect(deleted.status, deleted.text).toBe(415);
    expect(deleted.headers['accept-encoding']).toBe('identity');
    expect(deleted.text).toBe('error: Content-Encoding br is not supported: send the body uncompressed');
  });

  it('refuses a gzip Campaign Manager list at its headers, while its body is still streaming in', async () => {
    const request = openPost(hermod.baseUrl, ca, `${CM}/lists`, {
      authorization: basic('acme', 'secret'),
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    request.write(gzipSync('{"name":"Kia ora, e hoa mā","members":[{"destination":"+6421000007","param1":"你好 👋🏽"}'));
    const r = await request.reply;
    expect(r.status, r.text).toBe(415);
    expect(r.json).toEqual({ code: 415, message: 'Content-Encoding gzip is not supported: send the body uncompressed' });
    await request.end(']}').catch(() => undefined);
  });

  it('stores and shows v2 text exactly as sent', async () => {
    const sent = await post('/rest/sms/v2/messages', Buffer.from(`{"destination":"+6421000002","content":"${WORLD}"}`), 'application/json; charset=utf-8');
    expect(sent.status, sent.text).toBe(202);
    const got = await fetchJson(`/rest/sms/v2/messages?id=${sent.json.id}`);
    expect(got.content).toBe(WORLD);
  });

  it('finds invalid UTF-8 in a Campaign Manager list however the body is cut, even inside a character', async () => {
    const head = Buffer.from('{"name":"cut","members":[{"destination":"+6421000003","param1":"你好');
    const bad = Buffer.concat([head, Buffer.from([0xe4, 0xbd])]); // the first two bytes of 你 ...
    const request = openPost(hermod.baseUrl, ca, `${CM}/lists`, { authorization: basic('acme', 'secret'), 'content-type': 'application/json' });
    request.write(bad);
    await new Promise((r) => setTimeout(r, 100));
    const r = await request.end(Buffer.from('A"}]}')); // ... and then not its third
    expect(r.status, r.text).toBe(400);
    expect(r.json).toEqual({ code: 400, message: `request body is not valid UTF-8 at byte ${head.length}` });
  });

  async function fetchJson(p: string): Promise<any> {
    const client = createClient(hermod.baseUrl, ca, { user: 'acme', pass: 'secret' });
    try {
      const r = await client.get(p);
      expect(r.status, r.text).toBe(200);
      return r.json;
    } finally {
      client.close();
    }
  }
});
