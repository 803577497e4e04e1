import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { domainToASCII } from 'node:url';
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
 * Run again on the same directory (another host name, a renewal), it signs the
 * new certificate with the CA already there: every role deployed with it
 * keeps trusting the others.
 */
export async function makeRoleCertificates(dir: string, name: string, hosts: readonly string[] = ['localhost', '127.0.0.1']): Promise<RoleCertificates> {
  const names = hosts.map(subjectAltName);
  fs.mkdirSync(dir, { recursive: true });
  const caFile = path.join(dir, `${name}-ca.crt`);
  const caKeyFile = path.join(dir, `${name}-ca.key`);
  const ca = (await existingCa(caFile, caKeyFile)) ?? (await newCa(name, caFile, caKeyFile));
  const role = await generate([{ name: 'commonName', value: names.find((n) => n.type === 2)?.value ?? 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
      { name: 'subjectAltName', altNames: names.map((n) => (n.type === 7 ? { type: 7, ip: n.ip } : { type: 2, value: n.value })) },
    ],
  } as Options);
  const files = { caFile, certFile: path.join(dir, `${name}.crt`), keyFile: path.join(dir, `${name}.key`) };
  fs.writeFileSync(files.certFile, role.cert);
  fs.writeFileSync(files.keyFile, role.private, { mode: 0o600 });
  return files;
}

/** The CA a directory holds, or undefined for none; half of one (a certificate without its key, or the reverse) is an error. */
async function existingCa(caFile: string, caKeyFile: string): Promise<{ cert: string; private: string } | undefined> {
  const [hasCert, hasKey] = [fs.existsSync(caFile), fs.existsSync(caKeyFile)];
  if (!hasCert && !hasKey) return undefined;
  if (!hasKey)
    throw new Error(
      `${caFile} is there without its key ${path.basename(caKeyFile)}: roles trust that CA, and a new one would not be; restore the key, or move the CA away to start a new one`,
    );
  if (!hasCert) throw new Error(`${caKeyFile} is there without its certificate ${path.basename(caFile)}: restore it, or move the key away to start a new CA`);
  return { cert: fs.readFileSync(caFile, 'utf8'), private: fs.readFileSync(caKeyFile, 'utf8') };
}

async function newCa(name: string, caFile: string, caKeyFile: string): Promise<{ cert: string; private: string }> {
  const ca = await generate([{ name: 'commonName', value: `${name} CA` }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true },
    ],
  } as Options);
  fs.writeFileSync(caKeyFile, ca.private, { mode: 0o600 });
  fs.writeFileSync(caFile, ca.cert);
  return ca;
}

/**
 * A host as the certificate names it: an IP address as one, a name by its
 * ASCII form (`kāinga.example` → `xn--kinga-fwa.example`: what a TLS client
 * compares, where the raw UTF-8 came out garbled); anything else is refused.
 */
function subjectAltName(host: string): { type: 7; ip: string } | { type: 2; value: string } {
  if (net.isIP(host) !== 0) return { type: 7, ip: host };
  const ascii = domainToASCII(host);
  if (!ascii || !/^[a-z0-9*]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(ascii)) {
    throw new Error(`${JSON.stringify(host)} is not a host name or an IP address`);
  }
  return { type: 2, value: ascii };
}
