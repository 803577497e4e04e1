import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';

describe('a sender no SMSC can send from', () => {
  let hermod: HermodProcess;
  let acme: Client;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-senders-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1' } });
    acme = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
  });

  afterAll(async () => {
    acme?.close();
    await hermod?.stop();
  });

  it('is refused by SMS Gateway v2 with a 400 naming the field, for source and for mask', async () => {
    for (const field of ['source', 'mask']) {
      const r = await acme.post('/rest/sms/v2/messages', { destination: '+6421000001', content: 'Kia ora, e hoa mā', [field]: 'Māori' });
      expect(r.status, r.text).toBe(400);
      expect(r.json).toMatchObject({ statusCode: 400, message: expect.stringContaining(`${field} must be letters, digits and punctuation`) });
    }
  });

  it('is refused by SMS Gateway v2 with a 400 when alphanumeric and over 11 characters, or a number written with spaces', async () => {
    for (const [source, says] of [
      ['ABCDEFGHIJKL', 'at most 11 characters'],
      ['TeReoMaori-NZ', 'at most 11 characters'],
      ['+64 21 555', 'digits'],
      ['021-555-0123', 'digits'],
    ]) {
      const r = await acme.post('/rest/sms/v2/messages', { destination: '+6421000001', content: 'Kia ora 👋🏽 你好', source });
      expect(r.status, `${source}: ${r.text}`).toBe(400);
      expect(r.json).toMatchObject({ statusCode: 400, error: expect.any(String), message: expect.stringContaining(`source`) });
      expect(r.json.message).toContain(says);
    }
  });

  it('is refused by Gateway v1 with a 400 in its four-key error shape', async () => {
    const r = await acme.post('/rest/gateway/messages', { destination: '+6421000001', content: 'Tēnā koe', source: 'Tāne' });
    expect(r.status, r.text).toBe(400);
    expect(r.json).toMatchObject({ error: 'invalid_attrib', message: expect.stringContaining('source') });
  });

  it('is refused as a Campaign Manager mask with a 422 DefaultError', async () => {
    const r = await acme.post('/rest/campaign_manager/v1/acme/scheduled_campaigns', {
      name: 'hui',
      schedule: new Date(Date.now() + 86_400_000).toISOString(),
      mask: 'Māori',
      content: 'Kia ora',
      members: [{ destination: '+6421000001' }],
    });
    expect(r.status, r.text).toBe(422);
    expect(r.json).toMatchObject({ code: expect.anything(), message: expect.stringContaining('mask') });
  });

  it('is refused when blank (only spaces) on every interface, each in its own error shape', async () => {
    for (const blank of [' ', '   ']) {
      const v2 = await acme.post('/rest/sms/v2/messages', { destination: '+6421000001', content: 'Kia ora, e hoa mā', mask: blank });
      expect(v2.status, v2.text).toBe(400);
      expect(v2.json).toMatchObject({ statusCode: 400, message: 'mask is blank; give a sender or leave the field out' });
      const v1 = await acme.post('/rest/gateway/messages', { destination: '+6421000001', content: 'Tēnā koe', source: blank });
      expect(v1.status, v1.text).toBe(400);
      expect(v1.json).toMatchObject({ error: 'invalid_attrib', message: 'source is blank; give a sender or leave the field out' });
      const cm = await acme.post('/rest/campaign_manager/v1/acme/scheduled_campaigns', {
        name: 'hui ātea',
        schedule: new Date(Date.now() + 86_400_000).toISOString(),
        mask: blank,
        content: 'Kia ora 👋🏽',
        members: [{ destination: '+6421000001' }],
      });
      expect(cm.status, cm.text).toBe(422);
      expect(cm.json).toEqual({ code: 422, message: 'mask is blank; give a sender or leave the field out' });
    }
  });

  it('still sends from an alphanumeric sender and a number', async () => {
    expect((await acme.post('/rest/sms/v2/messages', { destination: '+6421000001', content: 'Kia ora 👋🏽', source: 'SHOP-NZ' })).status).toBe(202);
    expect((await acme.post('/rest/sms/v2/messages', { destination: '+6421000001', content: 'Kia ora 👋🏽', source: '+6421555000' })).status).toBe(202);
    // Eleven characters is the most an alphanumeric sender carries; a long number is not one.
    for (const source of ['ABCDEFGHIJK', 'Air NZ', '5000', '6421555000123'])
      expect((await acme.post('/rest/sms/v2/messages', { destination: '+6421000001', content: 'Kia ora 👋🏽', source })).status, source).toBe(202);
  });
});
