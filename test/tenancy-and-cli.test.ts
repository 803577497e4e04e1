import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';

describe("operators' CLI and tenancy", () => {
  let hermod: HermodProcess;
  let acme: Client;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-cli-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1' } });
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
    const v2 = await acme.post('/rest/sms/v2/messages', { destination: '+6421000009', content: 'Tāku muna — 私人 🤫' });
    const v1 = await acme.post('/rest/gateway/messages', { destination: '+6421000009', content: 'Tāku muna — 私人 🤫' });
    expect((await acme.get(`/rest/sms/v2/messages?id=${v2.json.id}`)).status).toBe(200);

    const otherV2 = await initech.get(`/rest/sms/v2/messages?id=${v2.json.id}`);
    expect(otherV2.status).toBe(404);
    expect(otherV2.text).not.toContain('muna');
    const otherV1 = await initech.get(`/rest/gateway/messages/${v1.json[0]}`);
    expect(otherV1.status).toBe(404);
    expect(otherV1.text).not.toContain('muna');
    initech.close();
  });

  it('changes a password so that the new one works for a new client', async () => {
    await hermod.cli(['apps', 'create', 'hooli', '--password', 'old-pw']);
    // A password is what a person typed: a macron and an emoji, sent as UTF-8 in Basic credentials.
    expect((await hermod.cli(['apps', 'set-password', 'hooli', 'kupuhipa-hōu-🔑'])).code).toBe(0);
    const fresh = createClient(hermod.baseUrl, hermod.ca(), { user: 'hooli', pass: 'kupuhipa-hōu-🔑' });
    expect((await fresh.post('/rest/sms/v2/messages', { destination: '+6421000010', content: 'Привет 👋🏽' })).status).toBe(202);
    const stale = createClient(hermod.baseUrl, hermod.ca(), { user: 'hooli', pass: 'kupuhipa-hou-🔑' });
    expect((await stale.post('/rest/sms/v2/messages', { destination: '+6421000010', content: 'Привет 👋🏽' })).status).toBe(401);
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

  it("answers --help after a command with that command's usage, and never takes it as an argument", async () => {
    const help = await hermod.cli(['apps', 'create', '--help']);
    expect(help.code).toBe(0);
    expect(help.output).toContain('apps create <name>');
    expect((await hermod.cli(['apps', 'list'])).output).not.toContain('--help');
    const start = await hermod.cli(['start', '-h']);
    expect(start.code).toBe(0);
    expect(start.output).toContain('start');
    const keys = await hermod.cli(['keys', 'issue', '--help']);
    expect(keys.code).toBe(0);
    expect(keys.output).toContain('keys issue');
    expect(keys.output).not.toMatch(/hmd_[A-Za-z0-9]/);
  });
});

describe('Idempotency-Key on sends', () => {
  let hermod: HermodProcess;
  let client: Client;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-idem-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '2' } });
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
  });

  afterAll(async () => {
    client?.close();
    await hermod?.stop();
  });

  // Idempotency keys stay ASCII: they travel in an HTTP header, which carries no other characters.
  it('answers a repeated v2 send with the first answer and sends nothing new, on either gateway process', async () => {
    const body = { destination: '+6421000011', content: 'Kotahi anake — 只一次 🎉' };
    const first = await client.post('/rest/sms/v2/messages', body, { 'idempotency-key': 'ota-1' });
    expect(first.status).toBe(202);
    const replies = await Promise.all(Array.from({ length: 6 }, () => client.post('/rest/sms/v2/messages', body, { 'idempotency-key': 'ota-1' })));
    for (const r of replies) {
      expect(r.status).toBe(202);
      expect(r.json).toEqual(first.json);
      expect(r.headers['idempotent-replayed']).toBe('true');
    }
    const other = await client.post('/rest/sms/v2/messages', body, { 'idempotency-key': 'ota-2' });
    expect(other.json.id).not.toBe(first.json.id);
  });

  it("refuses the same key with a different body in the interface's own error shape", async () => {
    await client.post('/rest/gateway/messages', { destination: '+6421000012', content: 'Kia ora, e hoa mā' }, { 'idempotency-key': 'v1-key' });
    const again = await client.post('/rest/gateway/messages', { destination: '+6421000012', content: 'Kia ora, e hoa mā' }, { 'idempotency-key': 'v1-key' });
    expect(again.status).toBe(201);
    const changed = await client.post('/rest/gateway/messages', { destination: '+6421000012', content: 'Kia ora, e hoa mā!' }, { 'idempotency-key': 'v1-key' });
    expect(changed.status).toBe(422);
    expect(changed.json).toMatchObject({ code: 422, error: expect.any(String), 'error-desc': expect.stringContaining('Idempotency-Key') });
  });

  it('gives a retry after hermod restarts, cleanly or after kill -9, the first answer again', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-idem-restart-'));
    const body = { destination: '+6421000014', content: 'Kia ora, order 4711 — 订单 🎉' };
    let own = await startHermod({ dataDir });
    let ownClient = createClient(own.baseUrl, own.ca(), { user: 'acme', pass: 'secret' });
    try {
      const first = await ownClient.post('/rest/sms/v2/messages', body, { 'idempotency-key': 'order-4711' });
      expect(first.status).toBe(202);
      for (const restart of [() => own.stop(), () => own.kill9()]) {
        ownClient.close();
        await restart();
        own = await startHermod({ dataDir });
        ownClient = createClient(own.baseUrl, own.ca(), { user: 'acme', pass: 'secret' });
        const retry = await ownClient.post('/rest/sms/v2/messages', body, { 'idempotency-key': 'order-4711' });
        expect(retry.status).toBe(202);
        expect(retry.json).toEqual(first.json);
        expect(retry.headers['idempotent-replayed']).toBe('true');
      }
    } finally {
      ownClient.close();
      await own.stop();
    }
  });

  it('does not keep a key whose request was refused, so the corrected request can use it', async () => {
    const bad = await client.post('/rest/sms/v2/messages', { destination: 'nope', content: '你好世界' }, { 'idempotency-key': 'retry-me' });
    expect(bad.status).toBe(400);
    const good = await client.post('/rest/sms/v2/messages', { destination: '+6421000013', content: '你好世界' }, { 'idempotency-key': 'retry-me' });
    expect(good.status).toBe(202);
  });
});
