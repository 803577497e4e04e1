import fs from 'node:fs';
import path from 'node:path';
import { generate } from 'selfsigned';

export interface RoleCertificates {
  caFile: string;
  certFile: string;
  keyFile: string;
}

type Options = Parameters<typeof generate>[1];

/**
 * `hermod grpc-certs`: a CA of the deployment's own and one certificate it
 * signed for the roles, good as server (for each host name or address core is
 * reached at) and as client. Written as `<name>-ca.crt`, `<name>.crt` and
 * `<name>.key`; the CA's key is kept beside them (`<name>-ca.key`) to sign more.
 */
export async function makeRoleCertificates(dir: string, name: string, hosts: readonly string[] = ['localhost', '127.0.0.1']): Promise<RoleCertificates> {
  fs.mkdirSync(dir, { recursive: true });
  const ca = await generate([{ name: 'commonName', value: `${name} CA` }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true },
    ],
  } as Options);
  const ip = /^[\d.]+$|:/;
  const role = await generate([{ name: 'commonName', value: hosts[0] ?? 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
      { name: 'subjectAltName', altNames: hosts.map((h) => (ip.test(h) ? { type: 7, ip: h } : { type: 2, value: h })) },
    ],
  } as Options);
  const files = { caFile: path.join(dir, `${name}-ca.crt`), certFile: path.join(dir, `${name}.crt`), keyFile: path.join(dir, `${name}.key`) };
  fs.writeFileSync(files.caFile, ca.cert);
  fs.writeFileSync(path.join(dir, `${name}-ca.key`), ca.private, { mode: 0o600 });
  fs.writeFileSync(files.certFile, role.cert);
  fs.writeFileSync(files.keyFile, role.private, { mode: 0o600 });
  return files;
}
