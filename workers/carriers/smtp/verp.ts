import { createHmac, timingSafeEqual } from 'node:crypto';
import { domainToASCII } from 'node:url';

/**
 * Variable envelope return paths, signed: each e-mail goes out with its own
 * envelope sender, `bounces+<message id>=<tag>@<domain>`, so a bounce names
 * the message it is about by the address it is sent to, whatever the bouncing
 * server puts in it. The tag is an HMAC of the id under the bounce secret
 * (HERMOD_BOUNCE_SECRET), as BATV signs its return paths: only a return path
 * hermod gave to an e-mail is taken, so a bounce forged with a message id
 * (an SMS's, an attempt's worked out from its message's id) is refused.
 */
const LOCAL = 'bounces';
/** Message ids that fit a local part as they are, with their tag, in 64 octets (hermod’s are UUIDs). */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,42}$/;
/** 48 bits of HMAC-SHA256, in hex: a case an MTA changes still reads back. */
const TAG_CHARS = 12;

/** Where the return paths of one deployment point, and the secret every e-mail worker of it signs them with. */
export interface ReturnPaths {
  domain: string;
  secret: string;
}

const tagOf = (messageId: string, secret: string): string => createHmac('sha256', secret).update(messageId).digest('hex').slice(0, TAG_CHARS);

/** The return path of one message; undefined when its id cannot be written into a local part. */
export function verpAddress(messageId: string, paths: ReturnPaths): string | undefined {
  return SAFE_ID.test(messageId) ? `${LOCAL}+${messageId}=${tagOf(messageId, paths.secret)}@${paths.domain}` : undefined;
}

/**
 * The message id a bounce address names, when it is one of ours: the domain
 * compared as DNS does, case-insensitively and in its ASCII form, so
 * `kāinga.nz` and `xn--kinga-fwa.nz` are one (an SMTP server may hand the
 * address over in either: smtp-server turns A-labels into Unicode), and the
 * tag the one this secret gives the id.
 */
export function messageIdOfVerp(address: string, paths: ReturnPaths): string | undefined {
  const at = address.lastIndexOf('@');
  if (at < 0 || !sameDomain(address.slice(at + 1), paths.domain)) return undefined;
  const local = address.slice(0, at);
  if (local.slice(0, LOCAL.length + 1).toLowerCase() !== `${LOCAL}+`) return undefined;
  const signed = local.slice(LOCAL.length + 1);
  const eq = signed.lastIndexOf('=');
  if (eq < 0) return undefined;
  const id = signed.slice(0, eq);
  const tag = Buffer.from(signed.slice(eq + 1).toLowerCase());
  const expected = Buffer.from(tagOf(id, paths.secret));
  return SAFE_ID.test(id) && tag.length === expected.length && timingSafeEqual(tag, expected) ? id : undefined;
}

const sameDomain = (a: string, b: string): boolean => {
  if (a.toLowerCase() === b.toLowerCase()) return true;
  const ascii = domainToASCII(a);
  return ascii !== '' && ascii === domainToASCII(b);
};
