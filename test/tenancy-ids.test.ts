import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';

describe('another application’s message id', () => {
  let hermod: HermodProcess;
  let acme: Client;
  let globex: Client;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-tenancy-ids-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1' } });
    expect((await hermod.cli(['apps', 'create', 'globex', '--password', 'globex-pw'])).code).toBe(0);
    acme = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    globex = createClient(hermod.baseUrl, hermod.ca(), { user: 'globex', pass: 'globex-pw' });
  });

  afterAll(async () => {
    acme?.close();
    globex?.close();
    await hermod?.stop();
  });

  it('answers a v1 lookup with the same 404 as an unknown id, telling nothing of the message (not even its UUID)', async () => {
    const sent = await acme.post('/rest/gateway/messages', { destination: '+6421000001', content: 'Kia ora, e hoa mā — private' });
    expect(sent.status).toBe(201);
    const v1Id = sent.json[0] as number;
    const own = await acme.get(`/rest/gateway/messages/${v1Id}`);
    expect(own.status).toBe(200);

    const other = await globex.get(`/rest/gateway/messages/${v1Id}`);
    expect(other.status).toBe(404);
    expect(other.text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
    expect(other.text).not.toContain('private');
    const unknown = await globex.get('/rest/gateway/messages/999999999');
    expect(other.json.message).toBe(unknown.json.message.replace('999999999', String(v1Id)));
  });
});
