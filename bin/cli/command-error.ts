import { toHermodError } from '../../lib/errors';

/**
 * The line an operators' command prints for a call that failed: where core
 * could not be reached, the address it tried and the variable that sets it
 * (a shell without HERMOD_CORE_ADDRESS tries the default).
 */
export function commandError(err: unknown, coreAddress: string): string {
  const e = toHermodError(err);
  if (e.code === 'unavailable') return `error: ${e.message} at ${coreAddress} (HERMOD_CORE_ADDRESS): is hermod running there?`;
  return `error: ${e.message}`;
}
