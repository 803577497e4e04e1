import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** A Google service-account key file as the Cloud console gives it out, for a token endpoint of our choosing. */
export interface ServiceAccountKeyFile {
  file: string;
  clientEmail: string;
  /** PEM (SPKI): what the token endpoint verifies assertions with. */
  publicKey: string;
}

/**
 * Writes a fresh service-account key (RSA 2048, owner-only file) whose
 * `token_uri` is `tokenUri`: what `npm start` gives hermod and the RBM
 * simulator, and what tests use. Never a real Google credential.
 */
export function writeServiceAccountKey(dir: string, tokenUri: string, name = 'rbm-simulator-service-account.json'): ServiceAccountKeyFile {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clientEmail = 'hermod-rbm@hermod-simulator.iam.gserviceaccount.com';
  const key = {
    type: 'service_account',
    project_id: 'hermod-simulator',
    private_key_id: randomBytes(20).toString('hex'),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: clientEmail,
    client_id: String(BigInt(`0x${randomBytes(8).toString('hex')}`)),
    token_uri: tokenUri,
  };
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(file, `${JSON.stringify(key, null, 2)}\n`, { mode: 0o600 });
  return { file, clientEmail, publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** Points an existing key file's `token_uri` elsewhere (the simulator's port is known only once it listens). */
export function pointServiceAccountKeyAt(file: string, tokenUri: string): void {
  const key = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(file, `${JSON.stringify({ ...key, token_uri: tokenUri }, null, 2)}\n`, { mode: 0o600 });
}
