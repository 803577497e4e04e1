import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from './config';
import { makeRoleCertificates, type RoleCertificates } from './role-certificates';

describe('the gateways’ certificate and key (HERMOD_TLS_CERT, HERMOD_TLS_KEY)', () => {
  let dir: string;
  let one: RoleCertificates;
  let other: RoleCertificates;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-tls-files-'));
    one = await makeRoleCertificates(path.join(dir, 'one'), 'gateway');
    other = await makeRoleCertificates(path.join(dir, 'other'), 'gateway');
  });

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const tls = (cert: string, key: string) => resolveConfig({ HERMOD_TLS_CERT: cert, HERMOD_TLS_KEY: key });

  it('takes a certificate and the key that goes with it', () => {
    expect(tls(one.certFile, one.keyFile)).toMatchObject({ tlsCertFile: one.certFile, tlsKeyFile: one.keyFile });
  });

  it('refuses one of the two set without the other, naming both', () => {
    expect(() => resolveConfig({ HERMOD_TLS_CERT: one.certFile })).toThrow(ConfigError);
    expect(() => resolveConfig({ HERMOD_TLS_CERT: one.certFile })).toThrow(/HERMOD_TLS_CERT and HERMOD_TLS_KEY must be set together/);
    expect(() => resolveConfig({ HERMOD_TLS_KEY: one.keyFile })).toThrow(/HERMOD_TLS_CERT and HERMOD_TLS_KEY must be set together/);
  });

  it('refuses a file that is not there, naming the variable and the file', () => {
    expect(() => tls(path.join(dir, 'nope.crt'), one.keyFile)).toThrow(ConfigError);
    expect(() => tls(path.join(dir, 'nope.crt'), one.keyFile)).toThrow(/^HERMOD_TLS_CERT: cannot read .*nope\.crt: no such file/);
    expect(() => tls(one.certFile, path.join(dir, 'nope.key'))).toThrow(/^HERMOD_TLS_KEY: cannot read .*nope\.key: no such file/);
  });

  it.skipIf(process.getuid?.() === 0)('refuses a file hermod may not read, naming the variable', () => {
    const locked = path.join(dir, 'locked.key');
    fs.copyFileSync(one.keyFile, locked);
    fs.chmodSync(locked, 0o000);
    expect(() => tls(one.certFile, locked)).toThrow(/^HERMOD_TLS_KEY: cannot read .*locked\.key: permission denied/);
  });

  it('refuses a key that is not the certificate’s own', () => {
    expect(() => tls(one.certFile, other.keyFile)).toThrow(ConfigError);
    expect(() => tls(one.certFile, other.keyFile)).toThrow(/^HERMOD_TLS_KEY: .* is not the private key of the certificate in HERMOD_TLS_CERT/);
  });

  it('says when the two are swapped', () => {
    expect(() => tls(one.keyFile, one.certFile)).toThrow(
      /^HERMOD_TLS_CERT: .* holds a private key, not a certificate: are HERMOD_TLS_CERT and HERMOD_TLS_KEY swapped\?/,
    );
  });

  it('refuses a file that holds neither', () => {
    const text = path.join(dir, 'notes.txt');
    fs.writeFileSync(text, 'kia ora\n');
    expect(() => tls(text, one.keyFile)).toThrow(/^HERMOD_TLS_CERT: .*notes\.txt is not a PEM certificate/);
    expect(() => tls(one.certFile, text)).toThrow(/^HERMOD_TLS_KEY: .*notes\.txt is not a PEM private key/);
  });
});
