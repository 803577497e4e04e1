import { domainToASCII } from 'node:url';

/**
 * Variable envelope return paths: each e-mail goes out with its own envelope
 * sender, `bounces+<message id>@<domain>`, so a bounce names the message it is
 * about by the address it is sent to, whatever the bouncing server puts in it.
 */
const LOCAL = 'bounces';
/** Message ids that fit a local part as they are (hermod's are UUIDs). */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._=-]{0,58}$/;

/** The return path of one message; undefined when its id cannot be written into a local part. */
export function verpAddress(messageId: string, domain: string): string | undefined {
  return SAFE_ID.test(messageId) ? `${LOCAL}+${messageId}@${domain}` : undefined;
}

/**
 * The message id a bounce address names, when it is one of ours for `domain`:
 * the domain compared as DNS does, case-insensitively and in its ASCII form, so
 * `kāinga.nz` and `xn--kinga-fwa.nz` are one (an SMTP server may hand the
 * address over in either: smtp-server turns A-labels into Unicode).
 */
export function messageIdOfVerp(address: string, domain: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at < 0 || !sameDomain(address.slice(at + 1), domain)) return undefined;
  const local = address.slice(0, at);
  if (local.slice(0, LOCAL.length + 1).toLowerCase() !== `${LOCAL}+`) return undefined;
  const id = local.slice(LOCAL.length + 1);
  return SAFE_ID.test(id) ? id : undefined;
}

const sameDomain = (a: string, b: string): boolean => {
  if (a.toLowerCase() === b.toLowerCase()) return true;
  const ascii = domainToASCII(a);
  return ascii !== '' && ascii === domainToASCII(b);
};
