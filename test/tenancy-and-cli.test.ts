import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { freePort } from './support/free-port';

describe('operators\' CLI and tenancy', () => {
  let hermod: HermodProcess;
  let acme: Client;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-cli-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_SMSC_PORT: String(await freePort()), HERMOD_GATEWAYS: '1' } });
    acme = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
  });

  afterAll(async () => {
    acme?.close();
    await hermod?.stop();
  });

  it('creates an application with a password and an API key, lists it, and refuses to create it twice', async () => {
    const created = await hermod.cli(['apps', 'create', 'globex', '--password', 'globex-pw', '--api-key']);
    expect(created.code).toBe(0);
    expect(created.output).toMatch(/created application globex/);
    expect(created.output).toMatch(/api key: hmd_\S+/);

    const listed = await hermod.cli(['apps', 'list']);
    expect(listed.output).toMatch(/acme\t\S+\tset\t-/);
    expect(listed.output).toMatch(/globex\t\S+\tset\tset/);

    expect((await hermod.cli(['apps', 'create', 'globex'])).code).toBe(1);
  });

  it('never shows one application the messages of another: 404 on v2 and v1', async () => {
    await hermod.cli(['apps', 'create', 'initech', '--password', 'initech-pw']);
    const initech = createClient(hermod.baseUrl, hermod.ca(), { user: 'initech', pass: 'initech-pw' });
    const v2 = await acme.post('/rest/sms/v2/messages', { destination: '+6421000009', content: 'private' });
    const v1 = await acme.post('/rest/gateway/messages', { destination: '+6421000009', content: 'private' });
    expect((await acme.get(`/rest/sms/v2/messages?id=${v2.json.id}`)).status).toBe(200);

    const otherV2 = await initech.get(`/rest/sms/v2/messages?id=${v2.json.id}`);
    expect(otherV2.status).toBe(404);
    expect(otherV2.text).not.toContain('private');
    const otherV1 = await initech.get(`/rest/gateway/messages/${v1.json[0]}`);
    expect(otherV1.status).toBe(404);
    expect(otherV1.text).not.toContain('private');
    initech.close();
  });

  it('changes a password so that the new one works for a new client', async () => {
    await hermod.cli(['apps', 'create', 'hooli', '--password', 'old-pw']);
    expect((await hermod.cli(['apps', 'set-password', 'hooli', 'new-pw'])).code).toBe(0);
    const fresh = createClient(hermod.baseUrl, hermod.ca(), { user: 'hooli', pass: 'new-pw' });
    expect((await fresh.post('/rest/sms/v2/messages', { destination: '+6421000010', content: 'x' })).status).toBe(202);
    const stale = createClient(hermod.baseUrl, hermod.ca(), { user: 'hooli', pass: 'wrong' });
    expect((await stale.post('/rest/sms/v2/messages', { destination: '+6421000010', content: 'x' })).status).toBe(401);
    fresh.close();
    stale.close();
  });

  it('issues and revokes API keys', async () => {
    const issued = await hermod.cli(['keys', 'issue', 'acme']);
    expect(issued.output).toMatch(/api key: hmd_/);
    expect((await hermod.cli(['apps', 'list'])).output).toMatch(/acme\t\S+\tset\tset/);
    expect((await hermod.cli(['keys', 'revoke', 'acme'])).code).toBe(0);
    expect((await hermod.cli(['apps', 'list'])).output).toMatch(/acme\t\S+\tset\t-/);
  });
});
