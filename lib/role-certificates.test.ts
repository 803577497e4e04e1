import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeRoleCertificates } from './role-certificates';

describe('the certificates of hermod’s roles (hermod grpc-certs)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-role-certs-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('signs a certificate for more hosts with the CA already in the directory, so roles deployed with the first still trust the new one', async () => {
    const first = await makeRoleCertificates(dir, 'hermod', ['core.kāinga.internal', '127.0.0.1']);
    const ca = fs.readFileSync(first.caFile, 'utf8');
    const caKey = fs.readFileSync(path.join(dir, 'hermod-ca.key'), 'utf8');

    const again = await makeRoleCertificates(dir, 'hermod', ['core.kāinga.internal', 'gateway-2.internal', '10.0.0.7']);
    expect(fs.readFileSync(again.caFile, 'utf8')).toBe(ca);
    expect(fs.readFileSync(path.join(dir, 'hermod-ca.key'), 'utf8')).toBe(caKey);
    const cert = new crypto.X509Certificate(fs.readFileSync(again.certFile));
    expect(cert.verify(new crypto.X509Certificate(ca).publicKey)).toBe(true);
    expect(cert.subjectAltName).toContain('DNS:gateway-2.internal');
    expect(cert.subjectAltName).toContain('IP Address:10.0.0.7');
  });

  it('names a host written in another script by its ASCII form (as TLS clients look it up), and refuses what is no host name', async () => {
    const files = await makeRoleCertificates(fs.mkdtempSync(path.join(dir, 'idn-')), 'hermod', ['kāinga.example', '核心.example', '::1']);
    const cert = new crypto.X509Certificate(fs.readFileSync(files.certFile));
    expect(cert.subjectAltName).toBe('DNS:xn--kinga-fwa.example, DNS:xn--15t21q.example, IP Address:0:0:0:0:0:0:0:1');
    await expect(makeRoleCertificates(fs.mkdtempSync(path.join(dir, 'bad-')), 'hermod', ['core.example', 'bad name!'])).rejects.toThrow(
      /"bad name!" is not a host name or an IP address/,
    );
  });

  it('refuses a directory holding a CA certificate without its key, rather than replace the CA roles trust', async () => {
    const lone = fs.mkdtempSync(path.join(dir, 'lone-'));
    await makeRoleCertificates(lone, 'hermod');
    fs.rmSync(path.join(lone, 'hermod-ca.key'));
    const before = fs.readFileSync(path.join(lone, 'hermod-ca.crt'), 'utf8');
    await expect(makeRoleCertificates(lone, 'hermod')).rejects.toThrow(/hermod-ca\.crt.*without its key hermod-ca\.key/);
    expect(fs.readFileSync(path.join(lone, 'hermod-ca.crt'), 'utf8')).toBe(before);
  });
});
