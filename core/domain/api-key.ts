import { randomBytes } from 'node:crypto';

/**
 * A new API key (or callback secret): 24 random bytes in base64url behind a
 * `hmd_` prefix, so a key pasted somewhere it should not be is recognisable.
 * Core makes them and so does the operators' CLI, which prints one before
 * core stores its hash.
 */
export function newApiKey(): string {
  return `hmd_${randomBytes(24).toString('base64url')}`;
}
