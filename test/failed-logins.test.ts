import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client, type Reply } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';

const basic = (user: string, pass: string): string => 'Basic ' + Buffer.from(`${user}:${pass}`, 'utf8').toString('base64');

const APP = 'kāinga-ā-iwi';
const PASSWORD = 'pā💥';
const OTHER = 'tōtara-🌳';
const OTHER_PASSWORD = 'rākau-ō-te-ngahere';

/** One request per interface, each with the error body that interface answers in. */
const INTERFACES: { name: string; call: (c: Client, header: string) => Promise<Reply>; shape: (status: number) => unknown }[] = [
  {
    name: 'SMS Gateway v2',
    call: (c, h) => c.post('/rest/sms/v2/messages', { destination: '+6421000001', content: 'Kia ora' }, { authorization: h }),
    shape: (status) => ({ statusCode: status, error: 'Too Many Requests', message: expect.any(String) }),
  },
  {
    name: 'Gateway v1',
    call: (c, h) => c.post('/rest/gateway/messages', { destination: '+6421000001', content: 'Tēnā koe' }, { authorization: h }),
    shape: (status) => ({ code: status, error: expect.any(String), message: expect.any(String), 'error-desc': expect.any(String) }),
  },
  {
    name: 'Campaign Manager',
    call: (c, h) => c.get(`/rest/campaign_manager/v1/${encodeURIComponent(APP)}/lists`, { authorization: h }),
    shape: (status) => ({ code: status, message: expect.any(String) }),
  },
  {
    name: 'Intelligent Messaging',
    call: (c, h) =>
      c.post(
        '/rest/im/v1/message',
        { destination: { mobile: '+6421000001' }, content: { text: '你好' }, delivery_attempts: [{ channel: 'sms' }] },
        { authorization: h },
      ),
    shape: (status) => ({ code: status, statusCode: status, message: expect.any(String), errors: [{ code: status, description: expect.any(String) }] }),
  },
];

describe('wrong passwords are throttled at the gateway', () => {
  let hermod: HermodProcess;
  let client: Client;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-failed-logins-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1' } });
    expect((await hermod.cli(['apps', 'create', APP, '--password', PASSWORD])).code).toBe(0);
    expect((await hermod.cli(['apps', 'create', OTHER, '--password', OTHER_PASSWORD])).code).toBe(0);
    client = createClient(hermod.baseUrl, hermod.ca());
  });

  afterAll(async () => {
    client?.close();
    await hermod?.stop();
  });

  it('answers the first few wrong passwords for an application 401, then 429 with Retry-After on every interface, in its own error shape', async () => {
    // Each of these is checked against the password's hash (about a quarter of a second each on a quiet machine).
    let hashed = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      expect((await INTERFACES[0]!.call(client, basic(APP, `pā💥-${i}`))).status).toBe(401);
      hashed = Math.min(hashed, performance.now() - started);
    }
    for (const api of INTERFACES) {
      const started = performance.now();
      const res = await api.call(client, basic(APP, 'pā💥-again'));
      expect(res.status, api.name).toBe(429);
      expect(Number(res.headers['retry-after']), api.name).toBeGreaterThan(0);
      expect(res.json, api.name).toMatchObject(api.shape(429) as object);
      // Refused before any password hash: quicker than the quickest answer that hashed, however loaded the machine.
      expect(performance.now() - started, api.name).toBeLessThan(hashed);
    }
  });

  it('refuses even the right password of an application during its back-off, so guessing it gets no answer', async () => {
    expect((await INTERFACES[0]!.call(client, basic(APP, PASSWORD))).status).toBe(429);
  });

  it('does not let a client escape its back-off by claiming another address in X-Forwarded-For, when no proxy is trusted', async () => {
    const spoofed = await client.post(
      '/rest/sms/v2/messages',
      { destination: '+6421000001', content: 'Kia ora' },
      {
        authorization: basic(APP, PASSWORD),
        'x-forwarded-for': '198.51.100.7',
      },
    );
    expect(spoofed.status).toBe(429);
  });

  it("still takes another application's right password from the same address", async () => {
    expect((await INTERFACES[0]!.call(client, basic(OTHER, OTHER_PASSWORD))).status).toBe(202);
  });

  it('answers a flood of wrong passwords without hashing them, so another tenant logs in at once', async () => {
    const flood = Array.from({ length: 200 }, (_, i) => INTERFACES[0]!.call(client, basic(APP, `${i}-pā💥`)));
    const started = performance.now();
    // A third application, never seen, so its check is not cached.
    expect((await hermod.cli(['apps', 'create', 'rūma-三', '--password', 'kī-🔑'])).code).toBe(0);
    const login = performance.now();
    expect((await INTERFACES[0]!.call(client, basic('rūma-三', 'kī-🔑'))).status).toBe(202);
    expect(performance.now() - login).toBeLessThan(2000);
    expect(new Set((await Promise.all(flood)).map((r) => r.status))).toEqual(new Set([429]));
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

describe('wrong passwords behind a load balancer hermod trusts (HERMOD_TRUSTED_PROXIES)', () => {
  let hermod: HermodProcess;
  let client: Client;
  const from = (address: string, user: string, pass: string) =>
    client.post(
      '/rest/sms/v2/messages',
      { destination: '+6421000001', content: 'Kia ora, e hoa mā 👋🏽' },
      { authorization: basic(user, pass), 'x-forwarded-for': address },
    );

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-failed-logins-proxy-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1', HERMOD_TRUSTED_PROXIES: '127.0.0.0/8, ::1' } });
    expect((await hermod.cli(['apps', 'create', APP, '--password', PASSWORD])).code).toBe(0);
    client = createClient(hermod.baseUrl, hermod.ca());
  });

  afterAll(async () => {
    client?.close();
    await hermod?.stop();
  });

  it('backs off only the client that guessed, not every tenant behind the same proxy', async () => {
    // One client guesses 20 passwords over four names it made up: its address is backed off.
    for (let i = 0; i < 20; i++) expect((await from('203.0.113.10', `n${i % 4}`, 'guess')).status).toBe(401);
    expect((await from('203.0.113.10', APP, PASSWORD)).status).toBe(429);
    // Another client of the same load balancer logs in (its check not cached), and so does one who says it is the first
    // but reached the proxy from elsewhere: the proxy appended the address it saw.
    expect((await from('203.0.113.11', APP, PASSWORD)).status).toBe(202);
    expect((await from('203.0.113.10, 203.0.113.12', APP, PASSWORD)).status).toBe(202);
  });
});
