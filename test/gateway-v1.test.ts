import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { eventually } from './support/eventually';

const VND = 'application/vnd.modica.gateway.v1+json';
const KIA_ORA = 'Kia ora, e hoa mā — tēnā koe 👋🏽🎉';

describe('Gateway v1 (/rest/gateway)', () => {
  let hermod: HermodProcess;
  let client: Client;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-v1-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_SMSC_RECEIPT_DELAY: '20ms', HERMOD_GATEWAYS: '1' } });
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
  });

  afterAll(async () => {
    client?.close();
    await hermod?.stop();
  });

  const expectError = (r: { status: number; json: any }, status: number, code: string) => {
    expect(r.status).toBe(status);
    expect(r.json).toEqual({ message: expect.any(String), code: status, error: code, 'error-desc': r.json.message });
  };

  it('answers a send with exactly 201 and a bare array holding the new integer id, which reads back', async () => {
    // The sender stays printable ASCII, all an SMSC can send from (test/sender-addresses.test.ts has the rest).
    const sent = await client.post('/rest/gateway/messages', {
      destination: '+6421000001',
      content: KIA_ORA,
      source: 'HERMOD',
      reference: 'заказ-1 你好',
      sms_class: 2,
    });
    expect(sent.status).toBe(201);
    expect(sent.json).toEqual([expect.any(Number)]);
    const id = sent.json[0] as number;
    expect(Number.isSafeInteger(id)).toBe(true);

    const read = await client.get(`/rest/gateway/messages/${id}`);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({
      id,
      content: KIA_ORA,
      source: 'HERMOD',
      destination: '+6421000001',
      reference: 'заказ-1 你好',
      class: 'mt_message',
      sms_class: 2,
    });
    await eventually(async () => ((await client.get(`/rest/gateway/messages/${id}`)).json.status === 'received' ? true : undefined));
  });

  it('takes back a message as it reads it: an empty source and mask, as GET shows them, mean none', async () => {
    const sent = await client.post('/rest/gateway/messages', { destination: '+6421000003', content: 'Kia ora anō 🔁' });
    expect(sent.status).toBe(201);
    const read = (await client.get(`/rest/gateway/messages/${sent.json[0]}`)).json;
    expect(read).toMatchObject({ source: '', mask: '' });
    const { id: _id, status: _status, ...again } = read;
    const resent = await client.post('/rest/gateway/messages', again);
    expect(resent.status).toBe(201);
    expect((await client.get(`/rest/gateway/messages/${resent.json[0]}`)).json).toMatchObject({ source: '', mask: '', content: 'Kia ora anō 🔁' });
  });

  it('accepts and answers in the vendor media type', async () => {
    const r = await client.request('POST', '/rest/gateway/messages', {
      raw: JSON.stringify({ destination: '+6421000002', content: '你好世界 — vnd' }),
      headers: { 'content-type': VND, accept: VND },
    });
    expect(r.status).toBe(201);
    expect(r.headers['content-type']).toContain(VND);
  });

  it('answers its errors in the vendor media type too when the client asks for it', async () => {
    const headers = { 'content-type': VND, accept: VND };
    const missing = await client.request('POST', '/rest/gateway/messages', { raw: JSON.stringify({ destination: '+6421000002' }), headers });
    expect(missing.status).toBe(400);
    expect(missing.headers['content-type']).toContain(VND);
    expect(JSON.parse(missing.text)).toMatchObject({ code: 400, error: 'missing_attrib' });
    const unknown = await client.request('GET', '/rest/gateway/messages/9007199254740991', { headers: { accept: VND } });
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toContain(VND);
    const plain = await client.request('GET', '/rest/gateway/messages/9007199254740991', { headers: { accept: 'application/json' } });
    expect(plain.headers['content-type']).toMatch(/^application\/json/);
  });

  it('refuses bad requests with message, code, error and error-desc', async () => {
    expectError(
      await client.request('POST', '/rest/gateway/messages', { raw: '{"content": "Привет",', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_json',
    );
    expectError(await client.post('/rest/gateway/messages', { destination: '+6421000001' }), 400, 'missing_attrib');
    expectError(await client.post('/rest/gateway/messages', { content: 'Привет, no destination' }), 400, 'missing_attrib');
    expectError(await client.post('/rest/gateway/messages', { destination: 'not-a-number', content: KIA_ORA }), 400, 'invalid_attrib');
    expectError(
      await createClient(hermod.baseUrl, hermod.ca()).post('/rest/gateway/messages', { destination: '+6421000001', content: KIA_ORA }),
      401,
      'unauthorized',
    );
  });

  it('takes sms_class 1 to 3 and refuses 4', async () => {
    expect((await client.post('/rest/gateway/messages', { destination: '+6421000001', content: 'Привет', sms_class: 3 })).status).toBe(201);
    expectError(await client.post('/rest/gateway/messages', { destination: '+6421000001', content: 'Привет', sms_class: 4 }), 400, 'invalid_attrib');
  });

  it('answers 404 for an unknown id and 400 for one that is not an integer', async () => {
    expectError(await client.get('/rest/gateway/messages/123456789'), 404, 'not_found');
    expectError(await client.get('/rest/gateway/messages/abc'), 400, 'invalid_attrib');
  });

  it('says an id past 2^53 − 1 is above the largest id, not that it is not a positive integer', async () => {
    const tooLarge = await client.get('/rest/gateway/messages/9007199254740993');
    expectError(tooLarge, 400, 'invalid_attrib');
    expect(tooLarge.json.message).toBe('messageid 9007199254740993 is above the largest message id, 9007199254740991 (2^53 − 1)');
    expect((await client.get('/rest/gateway/messages/0')).json.message).toBe('messageid must be a positive integer');
    expect((await client.get('/rest/gateway/messages/%D9%A3')).json.message).toBe('messageid must be a positive integer');
  });

  it('broadcasts with one result per destination, failures carrying a null id and a reason', async () => {
    const r = await client.post('/rest/gateway/messages/broadcast', {
      destination: ['+6421000003', 'nope', '+6421000004'],
      content: 'Kia ora koutou katoa 👋🏽',
    });
    expect(r.status).toBe(201);
    expect(r.json).toEqual([
      { id: expect.any(Number), destination: '+6421000003', status: 'success', message: null },
      { id: null, destination: 'nope', status: 'failure', message: expect.any(String) },
      { id: expect.any(Number), destination: '+6421000004', status: 'success', message: null },
    ]);
  });

  it('takes 1,000 destinations in a broadcast and refuses 1,001 with broadcast_limit', async () => {
    const to = (n: number) => Array.from({ length: n }, (_, i) => `+6423${String(i).padStart(6, '0')}`);
    const ok = await client.post('/rest/gateway/messages/broadcast', { destination: to(1000), content: '你好世界 🎉' });
    expect(ok.status).toBe(201);
    expect(ok.json).toHaveLength(1000);
    expect(new Set(ok.json.map((x: { id: number }) => x.id)).size).toBe(1000);
    expectError(await client.post('/rest/gateway/messages/broadcast', { destination: to(1001), content: '你好世界 🎉' }), 400, 'broadcast_limit');
  });
});
