import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { eventually } from './support/eventually';

/** One request per Basic-authenticated interface; each answers something other than 401 to good credentials. */
const INTERFACES: { name: string; call: (c: Client, header: string) => Promise<number> }[] = [
  {
    name: 'SMS Gateway v2',
    call: async (c, h) => (await c.post('/rest/sms/v2/messages', { destination: '+6421000001', content: 'Kia ora, e hoa mā' }, { authorization: h })).status,
  },
  {
    name: 'Gateway v1',
    call: async (c, h) => (await c.post('/rest/gateway/messages', { destination: '+6421000001', content: 'Tēnā koe 👋🏽' }, { authorization: h })).status,
  },
  { name: 'Campaign Manager', call: async (c, h) => (await c.get('/rest/campaign_manager/v1/tāne/lists', { authorization: h })).status },
  {
    name: 'Intelligent Messaging',
    call: async (c, h) =>
      (
        await c.post(
          '/rest/im/v1/message',
          { destination: { mobile: '+6421000001' }, content: { text: '你好' }, delivery_attempts: [{ channel: 'sms' }] },
          { authorization: h },
        )
      ).status,
  },
];

const basic = (user: string, pass: string): string => 'Basic ' + Buffer.from(`${user}:${pass}`, 'utf8').toString('base64');

describe('passwords are checked exactly', () => {
  let hermod: HermodProcess;
  let client: Client;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-credentials-'));
    // Each wrong password below must be answered 401: more than the gateway allows before it refuses for a while.
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1', HERMOD_AUTH_FAILURES_PER_NAME: '100', HERMOD_AUTH_FAILURES_PER_ADDRESS: '100' } });
    expect((await hermod.cli(['apps', 'create', 'tāne', '--password', 'pūtea-secret'])).code).toBe(0);
    client = createClient(hermod.baseUrl, hermod.ca());
  });

  afterAll(async () => {
    client?.close();
    await hermod?.stop();
  });

  for (const api of INTERFACES) {
    it(`${api.name} accepts the exact password of an application with a non-ASCII name and password`, async () => {
      expect(await api.call(client, basic('tāne', 'pūtea-secret'))).not.toBe(401);
    });

    it(`${api.name} accepts the same password and name typed with combining macrons (as macOS may), the same text in Unicode (RFC 8265)`, async () => {
      expect(await api.call(client, basic('tāne'.normalize('NFD'), 'pūtea-secret'.normalize('NFD')))).not.toBe(401);
    });

    const wrong: [string, string][] = [
      ['a NUL byte after it', 'pūtea-secret\0'],
      ['two NUL bytes after it', 'pūtea-secret\0\0'],
      ['trailing whitespace', 'pūtea-secret '],
      ['a Unicode look-alike (Cyrillic е)', 'pūtеa-secret'],
      ['the macron dropped', 'putea-secret'],
      ['nothing (an empty password)', ''],
    ];
    for (const [what, password] of wrong) {
      it(`${api.name} answers 401 to the password with ${what}`, async () => {
        expect(await api.call(client, basic('tāne', password))).toBe(401);
      });
    }
  }

  it('logs the refusals for an operator, with the address and the application named, never the password', async () => {
    const logged = () =>
      hermod
        .output()
        .split('\n')
        .filter((l) => l.includes("refused a request's credentials"))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    // Every refusal above came from one address for one application within a minute: one line says so.
    await eventually(() => logged().length > 0);
    expect(logged()).toHaveLength(1);
    expect(logged()[0]).toMatchObject({ level: 'warn', remote: '127.0.0.1', interface: 'sms_v2', application: 'tāne' });
    expect(hermod.output()).not.toContain('pūtea-secret ');
  });

  it('refuses the old password within seconds of a change, on every Basic interface, and takes the new one at once', async () => {
    expect((await hermod.cli(['apps', 'create', 'huri', '--password', 'kupu-tawhito-ā'])).code).toBe(0);
    const old = basic('huri', 'kupu-tawhito-ā');
    for (const api of INTERFACES) expect(await api.call(client, old)).not.toBe(401);
    expect((await hermod.cli(['apps', 'set-password', 'huri', 'kupu-hou-🔐'])).code).toBe(0);
    const changedAt = Date.now();
    for (const api of INTERFACES) expect(await api.call(client, basic('huri', 'kupu-hou-🔐'))).not.toBe(401);
    await eventually(async () => {
      for (const api of INTERFACES) expect(await api.call(client, old)).toBe(401);
      return true;
    }, 20_000);
    // Asked again after at most 5 s, then refused: well inside the minute a password's check used to be cached.
    expect(Date.now() - changedAt).toBeLessThan(12_000);
  }, 40_000);
});

describe('the bootstrap application after its password was changed', () => {
  it('keeps the changed password across a restart of hermod with the same HERMOD_BOOTSTRAP_PASSWORD, instead of bringing the old one back', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-bootstrap-'));
    let hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1' } });
    try {
      // startHermod's bootstrap application: acme, password secret.
      expect((await hermod.cli(['apps', 'set-password', 'acme', 'hōu-🔑-新'])).code).toBe(0);
      expect(await hermod.stop()).toBe(0);
      hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1' } });
      const client = createClient(hermod.baseUrl, hermod.ca());
      try {
        expect(await INTERFACES[0]!.call(client, basic('acme', 'secret'))).toBe(401);
        expect(await INTERFACES[0]!.call(client, basic('acme', 'hōu-🔑-新'))).toBe(202);
      } finally {
        client.close();
      }
    } finally {
      await hermod.stop();
    }
  }, 90_000);
});
