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
    new HermodError(code, message, {
      fields: [{ field: 'name', description: 'an application name: 1..255 characters, no colon, no control character, no space at either end' }],
    });
  if (name === '') throw problem('application name is empty', 'missing_attrib');
  if (name.length > 255) throw problem('application name is at most 255 characters');
  if (name.includes(':'))
    throw problem(`application name ${JSON.stringify(name)} has a colon: HTTP Basic ends the user name there, so it could never sign in with a password`);
  const control = /\p{Cc}/u.exec(name)?.[0];
  if (control !== undefined) {
    throw problem(`application name ${JSON.stringify(name)} has a control character (${codePointName(control)})`);
  }
  // A space (or an invisible format character) at either end cannot be seen in a listing or a log line:
  // `acme ` would stand beside `acme`, each signing in on its own.
  if (/^[\s\p{Cf}]|[\s\p{Cf}]$/u.test(name)) {
    throw problem(`application name ${JSON.stringify(name)} begins or ends with a space or an invisible character`);
  }
}

/** Characters nobody sees inside a name, with no use in one: zero-width space, word joiner, soft hyphen, BOM (not the joiners emoji and scripts need). */
const UNSEEN = /[\u200b\u2060\u00ad\ufeff]/gu;

/**
 * A name as people read it: case and width (full-width ａｃｍｅ, ligatures)
 * folded, unseen characters left out. Two names alike this way would be
 * taken for one another, so a new application may not take a name alike an
 * existing one's.
 */
export const nameAsRead = (name: string): string => name.normalize('NFKC').toLowerCase().normalize('NFKC').replace(UNSEEN, '');
