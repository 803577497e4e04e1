import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';

const CM = '/rest/campaign_manager/v1/acme';
const DAY = 86_400_000;

describe('SMS text with a control character a handset cannot show', () => {
  let hermod: HermodProcess;
  let acme: Client;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-sms-text-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1' } });
    acme = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
  });

  afterAll(async () => {
    acme?.close();
    await hermod?.stop();
  });

  const campaign = (extra: Record<string, unknown>) =>
    acme.post(`${CM}/scheduled_campaigns`, {
      name: 'Hoko o te kōanga 🌸',
      schedule: new Date(Date.now() + DAY).toISOString(),
      content: 'Kia ora — 你好 🎉',
      members: [{ destination: '+6421000001' }],
      ...extra,
    });

  const controls: [string, string][] = [
    ['kia ora \u0000 e hoa', 'U+0000'],
    ['hi there \u0007 bell 🔔', 'U+0007'],
    ['\u001b[31m红色', 'U+001B'],
    ['mutu\u007f', 'U+007F'],
  ];

  it('is refused as campaign content, opt_out_response or reply_response with 422 naming the field and the character', async () => {
    for (const [text, codePoint] of controls) {
      for (const field of ['content', 'opt_out_response', 'reply_response']) {
        const r = await campaign({ [field]: text });
        expect(r.status, `${field} ${JSON.stringify(text)}: ${r.text}`).toBe(422);
        expect(r.json).toEqual({ code: 422, message: expect.stringContaining(`${field} has a control character (${codePoint})`) });
      }
    }
  });

  it('is refused by SMS Gateway v2 with 400 and by Gateway v1 with 400 in their own shapes', async () => {
    for (const [content, codePoint] of controls) {
      const v2 = await acme.post('/rest/sms/v2/messages', { destination: '+6421000001', content });
      expect(v2.status, v2.text).toBe(400);
      expect(v2.json).toMatchObject({
        statusCode: 400,
        error: expect.any(String),
        message: expect.stringContaining(`content has a control character (${codePoint})`),
      });
      for (const [route, destination] of [
        ['/rest/gateway/messages', '+6421000001'],
        ['/rest/gateway/messages/broadcast', ['+6421000001']],
      ] as const) {
        const v1 = await acme.post(route, { destination, content });
        expect(v1.status, v1.text).toBe(400);
        expect(v1.json).toMatchObject({ error: 'invalid_attrib', message: expect.stringContaining(`content has a control character (${codePoint})`) });
      }
    }
  });

  it('is refused in a reference or class by v2 and v1, which keep and return them, and both still take any script (security trial: stored and shown back)', async () => {
    for (const field of ['reference', 'class']) {
      const text = '\u0000\u001b[2J';
      const v2 = await acme.post('/rest/sms/v2/messages', { destination: '+6421000001', content: 'kia ora', [field]: text });
      expect(v2.status, v2.text).toBe(400);
      expect(v2.json).toMatchObject({ statusCode: 400, message: expect.stringContaining(`${field} has a control character (U+0000)`) });
      for (const [route, destination] of [
        ['/rest/gateway/messages', '+6421000001'],
        ['/rest/gateway/messages/broadcast', ['+6421000001']],
      ] as const) {
        const v1 = await acme.post(route, { destination, content: 'kia ora', [field]: text });
        expect(v1.status, v1.text).toBe(400);
        expect(v1.json).toMatchObject({ error: 'invalid_attrib', message: expect.stringContaining(`${field} has a control character (U+0000)`) });
      }
    }
    const kept = { reference: 'Tāmaki — 订单 #42 🧾\nline two\ttabbed', class: 'mt_message' };
    expect((await acme.post('/rest/sms/v2/messages', { destination: '+6421000001', content: 'kia ora', ...kept })).status).toBe(202);
    expect((await acme.post('/rest/gateway/messages', { destination: '+6421000001', content: 'kia ora', ...kept })).status).toBe(201);
  });

  it('is refused in a template by `hermod templates set`, naming the character', async () => {
    const set = await hermod.cli(['templates', 'set', 'acme', 'pere', 'Tēnā koe \u0007 {{param1}}']);
    expect(set.code, set.output).toBe(1);
    expect(set.output).toContain('control character (U+0007)');
  });

  it('keeps line breaks and tabs, which SMS text carries, on every interface', async () => {
    const text = 'Kia ora e hoa,\r\nNgā mihi\t— 谢谢 🙏\n';
    expect((await campaign({ content: text, opt_out_response: text, reply_response: text })).status).toBe(201);
    expect((await acme.post('/rest/sms/v2/messages', { destination: '+6421000001', content: text })).status).toBe(202);
    expect((await acme.post('/rest/gateway/messages', { destination: '+6421000001', content: text })).status).toBe(201);
    expect((await hermod.cli(['templates', 'set', 'acme', 'rārangi', text])).code).toBe(0);
  });
});
