import fs from 'node:fs';
import { HermodError } from '../../../lib/errors';

/** The fields of a Google service-account key file (JSON) that RBM's OAuth flow uses. */
export interface ServiceAccountKey {
  clientEmail: string;
  privateKey: string;
  privateKeyId: string;
  /** Where access tokens come from: https://oauth2.googleapis.com/token for Google, the simulator's /token in tests. */
  tokenUri: string;
}

/** Google's token endpoint, which google-auth-library posts to and names as the assertion's audience. */
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';

/** Reads and checks a key file as the Google Cloud console gives it out (`type: service_account`). */
export function readServiceAccountKey(file: string): ServiceAccountKey {
  if (!file) throw new HermodError('carrier_rejected', 'HERMOD_RCS_SERVICE_ACCOUNT is not set: RBM needs a service-account key file');
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new HermodError('carrier_rejected', `cannot read the RBM service-account key ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseServiceAccountKey(json, file);
}

export function parseServiceAccountKey(json: unknown, source = 'the key'): ServiceAccountKey {
  const k = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const text = (name: string): string => (typeof k[name] === 'string' ? (k[name] as string) : '');
  const missing = ['client_email', 'private_key'].filter((name) => !text(name));
  if (k.type !== 'service_account' || missing.length > 0)
    throw new HermodError('carrier_rejected', `${source} is not a service-account key (type service_account, with ${missing.join(' and ') || 'its fields'})`);
  const tokenUri = text('token_uri') || GOOGLE_TOKEN_URI;
  if (!/^https?:\/\//.test(tokenUri)) throw new HermodError('carrier_rejected', `${source} has a token_uri that is not an http(s) URL`);
  return { clientEmail: text('client_email'), privateKey: text('private_key'), privateKeyId: text('private_key_id'), tokenUri };
}
