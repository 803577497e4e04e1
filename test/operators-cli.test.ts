import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsClient, type UpsertApplicationRequest } from '../proto/gen/hermod/v1/accounts';
import { createClient } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';

describe("operators' CLI against a running service", () => {
  let hermod: HermodProcess;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-operators-cli-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1' } });
  });

  afterAll(async () => {
    await hermod?.stop();
  });

  describe('application names', () => {
    it('refuses to create an application whose name has a colon, says why, and creates none', async () => {
      const created = await hermod.cli(['apps', 'create', 'co:lon', '--password', 'x']);
      expect(created.code, created.output).toBe(1);
      expect(created.output).toMatch(/^error: application name "co:lon" has a colon/m);
      expect((await hermod.cli(['apps', 'list'])).output).not.toMatch(/co:lon/);
    });

    it('refuses a name with a control character to any gRPC client, not only the CLI', async () => {
      const client = new AccountsClient(hermod.coreAddress, credentials.createInsecure());
      const request: UpsertApplicationRequest = {
        name: 'tēnā\tkoe',
        password: 'kupuhipa',
        apiKey: '',
        revokeApiKey: false,
        rotateCallbackSecret: false,
        sourceAddresses: undefined,
        quota: undefined,
      };
      const err = await new Promise<ServiceError | null>((resolve) =>
        client.upsertApplication(request, new Metadata(), { deadline: Date.now() + 10_000 }, (e) => resolve(e)),
      );
      client.close();
      expect(err?.details).toMatch(/control character \(U\+0009\)/);
      expect((await hermod.cli(['apps', 'list'])).output).not.toMatch(/tēnā/);
    });

    it('creates applications named in te reo Māori and in Chinese, which sign in with HTTP Basic', async () => {
      for (const name of ['kāinga-ā-iwi', '商店']) {
        const created = await hermod.cli(['apps', 'create', name, '--password', 'kupuhipa-🔑']);
        expect(created.code, created.output).toBe(0);
        const client = createClient(hermod.baseUrl, hermod.ca(), { user: name, pass: 'kupuhipa-🔑' });
        const templates = await client.get(`/rest/campaign_manager/v1/${encodeURIComponent(name)}/templates`);
        client.close();
        expect(templates.status, templates.text).toBe(200);
      }
    });
  });

  describe('block list removals', () => {
    it('says an entry is not on the list it was to be removed from, with exit code 1', async () => {
      expect((await hermod.cli(['blocklist', 'add', '--app', 'acme', '+6421999'])).code).toBe(0);

      const notOnAcme = await hermod.cli(['blocklist', 'remove', '--app', 'acme', '+6421998']);
      expect(notOnAcme.code, notOnAcme.output).toBe(1);
      expect(notOnAcme.output.trim()).toBe('error: +6421998 is not on the block list of acme');
      const notGlobal = await hermod.cli(['blocklist', 'remove', '+64']);
      expect(notGlobal.code, notGlobal.output).toBe(1);
      expect(notGlobal.output.trim()).toBe('error: +64 is not on the global block list');
      expect((await hermod.cli(['blocklist', 'list', '--app', 'acme'])).output).toMatch(/^acme\t\+6421999\t/m);
    });

    it('removes an entry written with spaces and the 00 prefix', async () => {
      expect((await hermod.cli(['blocklist', 'add', '--app', 'acme', '+8190 1234'])).code).toBe(0);
      const removed = await hermod.cli(['blocklist', 'remove', '--app', 'acme', '0081 90-1234']);
      expect(removed.code, removed.output).toBe(0);
      expect(removed.output.trim()).toBe('removed from the block list of acme: +81901234');
      expect((await hermod.cli(['blocklist', 'list', '--app', 'acme'])).output).not.toMatch(/\+81901234/);
    });
  });
});
