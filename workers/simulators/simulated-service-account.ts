import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../lib/log';
import { writeServiceAccountKey } from '../../lib/service-account-key';

/**
 * The key `hermod channel-simulators` run alone keeps in its data directory
 * (`rbm-simulator-service-account.json`), made at its first start: RCS workers
 * given it (HERMOD_RCS_SERVICE_ACCOUNT) keep working across the simulators'
 * restarts. Its token_uri is pointed at the simulator once that listens.
 */
export function keptSimulatorKey(dataDir: string): string {
  const file = path.join(dataDir, 'rbm-simulator-service-account.json');
  return fs.existsSync(file) ? file : writeServiceAccountKey(dataDir, 'http://127.0.0.1:0/token').file;
}

/**
 * The service account the RBM simulator takes assertions from: the one in
 * hermod's key file (HERMOD_RCS_SERVICE_ACCOUNT), its public key derived from
 * the private one. Without a readable key it takes one nobody holds, and says so.
 */
export function simulatedServiceAccount(file: string, log: Logger): { clientEmail: string; publicKey: KeyObject } {
  try {
    const key = JSON.parse(fs.readFileSync(file, 'utf8')) as { client_email: string; private_key: string };
    return { clientEmail: key.client_email, publicKey: createPublicKey(createPrivateKey(key.private_key)) };
  } catch (err) {
    log.warn('the RBM simulator has no service-account key: RCS sends will be refused', { file, err });
    return { clientEmail: 'nobody@hermod-simulator.iam.gserviceaccount.com', publicKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey };
  }
}
