import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig, ConfigError } from '../lib/config';
import { createClient, type Client } from './support/https-client';
import { freePort } from './support/free-port';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { eventually } from './support/eventually';

/** The secret that every hermod used to fall back to: anyone who read the source could sign with it. */
const PUBLIC_DEFAULT = 'hermod-development-webhook-secret';
const API_KEY = 'webhook-test-key-0123456789';

describe('carrier webhooks have no public default secret', () => {
  let hermod: HermodProcess;
  let client: Client;
  const callbacks: any[] = [];
  let receiver: http.Server;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        callbacks.push(JSON.parse(body));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-webhooks-'));
    hermod = await startHermod({
      dataDir,
      env: {
        HERMOD_GATEWAYS: '1',
        // The simulators started with the service, as `npm start` runs them (on ports of their own choosing, told to the workers).
        HERMOD_CHANNEL_SIMULATORS: 'true',
        HERMOD_SMTP_SINK_PORT: '0',
        HERMOD_WAB_SIMULATOR_PORT: '0',
        HERMOD_RCS_SIMULATOR_PORT: '0',
        HERMOD_MMS_SIMULATOR_PORT: '0',
        HERMOD_BOOTSTRAP_API_KEY: API_KEY,
        HERMOD_CALLBACK_ALLOW_PRIVATE: 'true',
      },
    });
    const port = (receiver.address() as { port: number }).port;
    expect(
      (await hermod.cli(['apps', 'set-callbacks', 'acme', '--im-status', `http://localhost:${port}/im`, '--reply', `http://localhost:${port}/reply`])).code,
    ).toBe(0);
    client = createClient(hermod.baseUrl, hermod.ca());
  });

  afterAll(async () => {
    client?.close();
    await hermod?.stop();
    receiver?.close();
  });

  it('refuses a delivery report signed with the old public default secret', async () => {
    const body = JSON.stringify({ id: 'mms-1', status: 'delivered' });
    const signature = `sha256=${createHmac('sha256', PUBLIC_DEFAULT).update(body).digest('hex')}`;
    const forged = await client.request('POST', '/webhooks/mms', { raw: body, headers: { 'content-type': 'application/json', 'x-signature': signature } });
    expect(forged.status).toBe(401);
  });

  it('answers the RBM simulator’s webhook verification at start, with the client token both were given', async () => {
    await eventually(async () => (hermod.output().includes('"msg":"RBM webhook verified"') ? true : undefined), 20_000, 100);
    expect(hermod.output()).not.toContain('"msg":"RBM webhook not verified"');
  });

  it('refuses WhatsApp’s subscription handshake with the old default or an empty verify token', async () => {
    expect((await client.get(`/webhooks/wab?hub.mode=subscribe&hub.verify_token=${PUBLIC_DEFAULT}&hub.challenge=42`)).status).toBe(403);
    expect((await client.get('/webhooks/wab?hub.mode=subscribe&hub.verify_token=&hub.challenge=42')).status).toBe(403);
  });

  it('still takes the simulators’ own signed reports: a WhatsApp message is delivered and read', async () => {
    const sent = await client.post(
      '/rest/im/v1/message',
      {
        destination: { mobile: '+6421555001' },
        message: { type: 'text', text: { body: 'Kia ora, e hoa mā — tēnā koe 👋🏽' } },
        delivery_attempts: [{ channel: 'wab', event: 'read', timeout: 60 }],
      },
      { authorization: API_KEY },
    );
    expect(sent.status, sent.text).toBe(202);
    await eventually(async () => (callbacks.some((c) => c.id === sent.json.id && c.status === 'read') ? true : undefined), 60_000, 200);
  });

  it('takes a handset’s WhatsApp reply from hermod reply --whatsapp, which the WhatsApp simulator posts as a signed webhook, and hands it to the application', async () => {
    // The simulators' ports, as they chose them (under npm start, the defaults the CLI reads too).
    const listening = hermod
      .output()
      .split('\n')
      .find((l) => l.includes('"msg":"channel simulators listening"'));
    const wabPort = String((JSON.parse(listening!) as { wab: number }).wab);
    // A reply reaches an application that sent from the business number or claims it (README, Reply routing).
    const claim = await hermod.cli(['apps', 'set-sources', 'acme', '+15550000001']);
    expect(claim.code, claim.output).toBe(0);
    const text = 'Kia ora — he pātai tāku mō te hui 🙋🏽 你好';
    const reply = await hermod.cli(['reply', '--whatsapp', '+6421555077', text], { HERMOD_WAB_SIMULATOR_PORT: wabPort });
    expect(reply.code, reply.output).toBe(0);
    expect(reply.stdout).toMatch(
      new RegExp(`^the WhatsApp simulator delivered "${text}" from \\+6421555077 to the business number \\+15550000001 \\(wamid\\.\\w+\\)\\n$`),
    );
    const got = await eventually(() => callbacks.find((c) => c.source === '+6421555077'), 20_000, 50);
    expect(got).toMatchObject({ content: text, destination: '+15550000001' });
  });

  it('says what is wrong when hermod reply --whatsapp finds no WhatsApp simulator, and exits 1', async () => {
    // A line the CLI cannot read as one handset and one text: refused before anything is sent (exit 2).
    const split = await hermod.cli(['reply', '--whatsapp', '+642100', '0001', 'kia ora']);
    expect({ code: split.code, stderr: split.stderr }).toEqual({
      code: 2,
      stderr: 'error: too many arguments for "reply --whatsapp" (it takes <from> <text>): "kia ora" — quote a value that has spaces\n',
    });
    const blank = await hermod.cli(['reply', '--whatsapp', '+6421555078', '   ']);
    expect({ code: blank.code, stderr: blank.stderr }).toEqual({ code: 2, stderr: 'error: the text is empty\n' });
    const short = await hermod.cli(['reply', '--whatsapp', '+64', 'Kia ora']);
    expect({ code: short.code, stderr: short.stderr }).toEqual({
      code: 2,
      stderr: 'error: <from> must be a handset’s number, + and 6 to 15 digits (+6421000001), got "+64"\n',
    });
    const nobody = await freePort();
    const refused = await hermod.cli(['reply', '--whatsapp', '+6421555078', 'Kia ora'], { HERMOD_WAB_SIMULATOR_PORT: String(nobody) });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`error: no WhatsApp simulator answered at http://127.0.0.1:${nobody}\n`);
    // A server that is not the simulator (hermod's own metrics port, here), as the Graph API itself would be.
    const elsewhere = await hermod.cli(['reply', '--whatsapp', '+6421555078', 'Kia ora'], { HERMOD_WAB_SIMULATOR_PORT: String(hermod.metricsPort) });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(new RegExp(`^error: http://127\\.0\\.0\\.1:${hermod.metricsPort} is not hermod's WhatsApp simulator \\(it answered \\d+`));
  });

  it('sends RCS with an OAuth token from the key the supervisor made for its RBM simulator, and hears it read', async () => {
    const sent = await client.post(
      '/rest/im/v1/message',
      {
        destination: { mobile: '+6421555002' },
        message: { type: 'text', text: { body: 'Kia ora — 你好 👋🏽' } },
        delivery_attempts: [{ channel: 'rcs', event: 'read', timeout: 60 }],
      },
      { authorization: API_KEY },
    );
    expect(sent.status, sent.text).toBe(202);
    await eventually(async () => (callbacks.some((c) => c.id === sent.json.id && c.status === 'read') ? true : undefined), 60_000, 200);
  });
});

describe('a real carrier needs its webhook secret', () => {
  for (const prefix of ['WAB', 'RCS', 'MMS']) {
    it(`refuses to start with HERMOD_${prefix}_URL set and no HERMOD_${prefix}_WEBHOOK_SECRET`, () => {
      expect(() => resolveConfig({ [`HERMOD_${prefix}_URL`]: 'https://carrier.example.com' })).toThrow(ConfigError);
      expect(() => resolveConfig({ [`HERMOD_${prefix}_URL`]: 'https://carrier.example.com' })).toThrow(new RegExp(`HERMOD_${prefix}_WEBHOOK_SECRET`));
      // RBM also needs its service account (below).
      const credentials = prefix === 'RCS' ? { HERMOD_RCS_SERVICE_ACCOUNT: '/etc/hermod/rbm-key.json' } : {};
      expect(() =>
        resolveConfig({ [`HERMOD_${prefix}_URL`]: 'https://carrier.example.com', [`HERMOD_${prefix}_WEBHOOK_SECRET`]: 'ā-real-secret', ...credentials }),
      ).not.toThrow();
    });
  }

  it('refuses to start with HERMOD_RCS_URL set and no HERMOD_RCS_SERVICE_ACCOUNT: RBM takes only OAuth tokens', () => {
    const env = { HERMOD_RCS_URL: 'https://rcsbusinessmessaging.googleapis.com', HERMOD_RCS_WEBHOOK_SECRET: 'ā-real-secret' };
    expect(() => resolveConfig(env)).toThrow(/HERMOD_RCS_SERVICE_ACCOUNT/);
    expect(resolveConfig({ ...env, HERMOD_RCS_SERVICE_ACCOUNT: '/etc/hermod/rbm-key.json' }).channels.rcs).toMatchObject({
      serviceAccount: '/etc/hermod/rbm-key.json',
      baseUrl: 'https://rcsbusinessmessaging.googleapis.com',
    });
  });
});
