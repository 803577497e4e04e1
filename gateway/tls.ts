import fs from 'node:fs/promises';
import path from 'node:path';

export interface TlsMaterial {
  cert: string;
  key: string;
  selfSigned: boolean;
}

/**
 * The configured certificate and key, or a self-signed pair created once in
 * the data directory and reused on every later start.
 */
export async function loadOrCreateCertificate(dataDir: string, certFile: string, keyFile: string): Promise<TlsMaterial> {
  // Both set, readable and a pair: the configuration checked them (lib/config.ts).
  if (certFile || keyFile) {
    return { cert: await fs.readFile(certFile, 'utf8'), key: await fs.readFile(keyFile, 'utf8'), selfSigned: false };
  }
  const dir = path.join(dataDir, 'tls');
  const certPath = path.join(dir, 'self-signed.crt');
  const keyPath = path.join(dir, 'self-signed.key');
  try {
    return { cert: await fs.readFile(certPath, 'utf8'), key: await fs.readFile(keyPath, 'utf8'), selfSigned: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  // selfsigned is loaded only to make a pair: its certificate libraries are some 100 ms of a start.
  const { generate } = await import('selfsigned');
  // An ECDSA P-256 pair: about 40 ms with its certificate, where an RSA 2048 one took 90–150 ms of every first start's CPU
  // (each test's hermod starts on a fresh data directory). Every TLS client of this century takes it.
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: false },
      // An EC key signs the handshake; it enciphers no key (RFC 5480), so keyEncipherment is not claimed.
      { name: 'keyUsage', digitalSignature: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  } as Parameters<typeof generate>[1]);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  // Several gateway processes may race here on first start: write to a
  // private temp name and rename, then read back whichever pair won.
  const tmp = `.${process.pid}.${Date.now()}`;
  await fs.writeFile(keyPath + tmp, pems.private, { mode: 0o600 });
  await fs.writeFile(certPath + tmp, pems.cert);
  try {
    await fs.link(keyPath + tmp, keyPath);
    await fs.rename(certPath + tmp, certPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    await waitFor(certPath);
  } finally {
    await fs.rm(keyPath + tmp, { force: true });
    await fs.rm(certPath + tmp, { force: true });
  }
  return { cert: await fs.readFile(certPath, 'utf8'), key: await fs.readFile(keyPath, 'utf8'), selfSigned: true };
}

async function waitFor(file: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      await fs.access(file);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`timed out waiting for ${file}`);
}
