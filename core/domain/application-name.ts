import { HermodError } from '../../lib/errors';
import { codePointName } from './control-characters';

/**
 * Refuses a name no new application may have. A colon: HTTP Basic (RFC 7617)
 * ends the user name at the first one, and the name is the Basic user name
 * (the Campaign Manager's `{application_name}` as well), so that application
 * could never sign in with its password. A control character (tab, newline,
 * NUL, DEL, C1): it breaks the CLI's and the logs' lines and cannot be typed
 * back. Letters of any script, spaces, punctuation and emoji are names.
 */
export function checkApplicationName(name: string): void {
  const problem = (message: string, code: 'missing_attrib' | 'invalid_attrib' = 'invalid_attrib'): HermodError =>
    new HermodError(code, message, { fields: [{ field: 'name', description: 'an application name: 1..255 characters, no colon, no control character' }] });
  if (name === '') throw problem('application name is empty', 'missing_attrib');
  if (name.length > 255) throw problem('application name is at most 255 characters');
  if (name.includes(':'))
    throw problem(`application name ${JSON.stringify(name)} has a colon: HTTP Basic ends the user name there, so it could never sign in with a password`);
  const control = /\p{Cc}/u.exec(name)?.[0];
  if (control !== undefined) {
    throw problem(`application name ${JSON.stringify(name)} has a control character (${codePointName(control)})`);
  }
}
