import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeServiceAccountKey, type ServiceAccountKeyFile } from '../../../lib/service-account-key';

/**
 * A fresh service-account key for a test, and a way to point its `token_uri`
 * at the RBM simulator once the simulator has its port (the simulator needs
 * the public key before it starts).
 */
export function rbmServiceAccount(): ServiceAccountKeyFile & { pointAt(port: number): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-rbm-key-'));
  const key = writeServiceAccountKey(dir, 'http://localhost:1/token');
  return {
    ...key,
    pointAt(port) {
      const json = JSON.parse(fs.readFileSync(key.file, 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(key.file, JSON.stringify({ ...json, token_uri: `http://localhost:${port}/token` }), { mode: 0o600 });
    },
  };
}
