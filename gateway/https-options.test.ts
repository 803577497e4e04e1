import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsServerOptions } from './https-options';
import { loadOrCreateCertificate, type TlsMaterial } from './tls';

/** What a client offering only `options` gets from the gateway's HTTPS server: the protocol and cipher, or the error. */
function handshake(port: number, material: TlsMaterial, options: tls.ConnectionOptions): Promise<string> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: material.cert, servername: 'localhost', ...options });
    socket.once('secureConnect', () => {
      resolve(`${socket.getProtocol()} ${socket.getCipher().standardName}`);
      socket.destroy();
    });
    socket.once('error', (err) => resolve(`refused: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
  });
}

/** An RSA pair, as an operator's own certificate (HERMOD_TLS_CERT) often is: the self-signed one hermod makes is ECDSA. */
async function rsaMaterial(): Promise<TlsMaterial> {
  const { generate } = await import('selfsigned');
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] }],
  } as Parameters<typeof generate>[1]);
  return { cert: pems.cert, key: pems.private, selfSigned: false };
}

describe.each([
  { key: 'ECDSA', auth: 'ECDSA', material: () => loadOrCreateCertificate(fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-https-options-')), '', '') },
  { key: 'RSA', auth: 'RSA', material: rsaMaterial },
])("the gateway's HTTPS server with an $key certificate", ({ auth, material: make }) => {
  let material: TlsMaterial;
  let server: https.Server;
  let port: number;
  beforeAll(async () => {
    material = await make();
    server = https.createServer(httpsServerOptions(material), (_req, res) => res.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('speaks TLS 1.3, and TLS 1.2 only with forward-secret AEAD ciphers (Mozilla "intermediate"), refusing CBC, RSA key exchange and TLS 1.1', async () => {
    expect(await handshake(port, material, {})).toMatch(/^TLSv1\.3 TLS_/);
    expect(await handshake(port, material, { maxVersion: 'TLSv1.2' })).toMatch(
      new RegExp(`^TLSv1\\.2 TLS_ECDHE_${auth}_WITH_(AES_\\d+_GCM|CHACHA20_POLY1305)`),
    );
    expect(await handshake(port, material, { maxVersion: 'TLSv1.2', ciphers: `ECDHE-${auth}-CHACHA20-POLY1305` })).toBe(
      `TLSv1.2 TLS_ECDHE_${auth}_WITH_CHACHA20_POLY1305_SHA256`,
    );
    for (const cbc of [`ECDHE-${auth}-AES128-SHA256`, `ECDHE-${auth}-AES256-SHA384`, `ECDHE-${auth}-AES128-SHA`, 'AES128-GCM-SHA256', 'AES256-SHA256']) {
      expect(await handshake(port, material, { maxVersion: 'TLSv1.2', ciphers: cbc }), cbc).toMatch(/^refused/);
    }
    expect(await handshake(port, material, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' })).toMatch(/^refused/);
  });
});
