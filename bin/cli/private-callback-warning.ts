import net from 'node:net';
import { isPrivateAddress } from '../../core/callbacks/callback-url';

/**
 * The warning an operator gets for a callback URL whose host is this machine
 * or a private network (`localhost`, 127.x, ::1, 10.x, …), or undefined:
 * core refuses every callback to such a host unless it runs with
 * HERMOD_CALLBACK_ALLOW_PRIVATE=true, which the CLI cannot see. Only what the
 * URL itself says is judged: a name is resolved by core, where it is sent
 * from, and may resolve differently here. A URL that is not one is left to
 * core's own error.
 */
export function privateCallbackWarning(option: string, text: string | undefined): string | undefined {
  if (!text) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const local = /^localhost\.?$|\.localhost\.?$/i.test(host) || (net.isIP(host) !== 0 && isPrivateAddress(host));
  if (!local) return undefined;
  return `warning: ${option} callbacks to ${url.hostname} are refused unless core runs with HERMOD_CALLBACK_ALLOW_PRIVATE=true: it is this machine or a private network`;
}
