import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Metadata, credentials, type ChannelCredentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsClient } from '../proto/gen/hermod/v1/accounts';
import { ConfigError, resolveConfig } from '../lib/config';
import { createClient } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { makeRoleCertificates, type RoleCertificates } from '../lib/role-certificates';

/** Lists applications over core's admin API with the given credentials; resolves with the gRPC outcome. */
function listApplications(address: string, creds: ChannelCredentials): Promise<'ok' | string> {
  const client = new AccountsClient(address, creds);
  return new Promise((resolve) => {
    client.listApplications({}, new Metadata(), { deadline: Date.now() + 5000 }, (err) => {
      client.close();
      resolve(err ? `refused: ${err.message}` : 'ok');
    });
  });
}

describe('roles authenticate each other with mutual TLS', () => {
  let hermod: HermodProcess;
  let ours: RoleCertificates;
  let stranger: RoleCertificates;
  let address: string;

  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-mtls-'));
    // As an operator makes them: `hermod grpc-certs <dir> <host>...` prints the three variables.
    const printed = execFileSync(
      process.execPath,
      [path.join(import.meta.dirname, '../bin/hermod.js'), 'grpc-certs', path.join(dir, 'certs'), 'localhost', '127.0.0.1'],
      { encoding: 'utf8' },
    );
    const variable = (name: string): string => new RegExp(`^${name}=(.+)$`, 'm').exec(printed)![1]!;
    ours = { certFile: variable('HERMOD_GRPC_TLS_CERT'), keyFile: variable('HERMOD_GRPC_TLS_KEY'), caFile: variable('HERMOD_GRPC_TLS_CA') };
    stranger = await makeRoleCertificates(path.join(dir, 'certs'), 'stranger');
    hermod = await startHermod({
      dataDir: path.join(dir, 'data'),
      env: {
        HERMOD_GATEWAYS: '1',
        HERMOD_CORE_ADDRESS: 'localhost:0',
        HERMOD_GRPC_TLS_CERT: ours.certFile,
        HERMOD_GRPC_TLS_KEY: ours.keyFile,
        HERMOD_GRPC_TLS_CA: ours.caFile,
      },
    });
    // The port core got, named by host name as the certificates are.
    address = hermod.coreAddress;
    expect(address).toMatch(/^localhost:[1-9]\d*$/);
  });

  afterAll(async () => {
    await hermod?.stop();
  });

  it('serves the REST interfaces through gateways that reach core over mutual TLS', async () => {
    const client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    const sent = await client.post('/rest/sms/v2/messages', { destination: '+6421000001', content: 'Kia ora, e hoa mā 👋🏽' });
    expect(sent.status, sent.text).toBe(202);
    client.close();
  });

  it('answers a client that holds a certificate signed by the roles’ CA', async () => {
    expect(
      await listApplications(address, credentials.createSsl(fs.readFileSync(ours.caFile), fs.readFileSync(ours.keyFile), fs.readFileSync(ours.certFile))),
    ).toBe('ok');
  });

  it('refuses a plaintext client', async () => {
    expect(await listApplications(address, credentials.createInsecure())).toMatch(/^refused/);
  });

  it('refuses a TLS client without a certificate', async () => {
    expect(await listApplications(address, credentials.createSsl(fs.readFileSync(ours.caFile)))).toMatch(/^refused/);
  });

  it('refuses a client whose certificate another CA signed', async () => {
    expect(
      await listApplications(
        address,
        credentials.createSsl(fs.readFileSync(ours.caFile), fs.readFileSync(stranger.keyFile), fs.readFileSync(stranger.certFile)),
      ),
    ).toMatch(/^refused/);
  });
});

describe('plaintext between roles', () => {
  it('is allowed on loopback', () => {
    for (const address of ['127.0.0.1:50051', 'localhost:50051', '[::1]:50051'])
      expect(resolveConfig({ HERMOD_CORE_ADDRESS: address }).grpcTls).toBeUndefined();
  });

  it('is refused beyond loopback: a core address on the network needs the certificate files', () => {
    for (const address of ['core:50051', '0.0.0.0:50051', '10.1.2.3:50051', 'core.hermod.svc.cluster.local:50051']) {
      expect(() => resolveConfig({ HERMOD_CORE_ADDRESS: address })).toThrow(ConfigError);
      expect(() => resolveConfig({ HERMOD_CORE_ADDRESS: address })).toThrow(/HERMOD_GRPC_TLS_CERT/);
    }
  });

  it('needs all three certificate variables or none', () => {
    expect(() => resolveConfig({ HERMOD_GRPC_TLS_CERT: '/etc/hermod/core.crt' })).toThrow(/must be set together/);
  });
});
