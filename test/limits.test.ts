import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';

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
    // Senders stay printable ASCII, all an SMSC can send from (test/sender-addresses.test.ts has the rest).
    ['source of 16 characters', { source: 's'.repeat(16) }, { source: 's'.repeat(17) }],
    ['reference of 255 characters', { reference: world(255) }, { reference: world(256) }],
    ['class of 32 characters', { class: world(32) }, { class: world(33) }],
    ['mask of 11 characters', { mask: 'm'.repeat(11) }, { mask: 'm'.repeat(12) }],
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

  it('v2 takes sms_class 0 to 3 and an integration_id that is a UUID', async () => {
    expect((await client.post('/rest/sms/v2/messages', { ...base, sms_class: 3, integration_id: '8a1e7c52-3b0e-4a51-9d63-0b7e6f1e2a10' })).status).toBe(202);
    expect((await client.post('/rest/sms/v2/messages', { ...base, sms_class: 4 })).status).toBe(400);
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
