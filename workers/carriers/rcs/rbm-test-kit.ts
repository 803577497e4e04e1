import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pointServiceAccountKeyAt, writeServiceAccountKey, type ServiceAccountKeyFile } from '../../../lib/service-account-key';

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
    pointAt: (port) => pointServiceAccountKeyAt(key.file, `http://localhost:${port}/token`),
  };
}
