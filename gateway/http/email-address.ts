import { domainToASCII } from 'node:url';

// atext of RFC 5322 (letters, digits and !#$%&'*+-/=?^_`{|}~), widened by RFC 6531 to any non-ASCII character.
const ATOM = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u0080-\u{10FFFF}]+$/u;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Whether text is an e-mail address a mail system delivers to, in the world's
 * scripts: a dot-atom local part of at most 64 bytes that may hold any
 * non-ASCII character (RFC 6531, SMTPUTF8), and a domain of two labels or
 * more that may be internationalised (`kōrero.nz`, `例子.广告`: checked in
 * its punycode form, at most 253 characters), 254 octets in all as SMTP
 * carries it (RFC 5321). Quoted local parts, comments
 * and address literals are refused, as every mainstream sender does.
 */
export function isEmailAddress(text: string): boolean {
  const at = text.lastIndexOf('@');
  if (at <= 0 || at === text.length - 1) return false;
  const local = text.slice(0, at);
  const domain = text.slice(at + 1);
  if (Buffer.byteLength(local, 'utf8') > 64) return false;
  if (!local.split('.').every((atom) => ATOM.test(atom))) return false;
  if (/[\p{Cc}\p{Cf}\p{Z}]/u.test(local)) return false;
  const ascii = domainToASCII(domain);
  if (ascii === '' || ascii.length > 253) return false;
  // RFC 5321 §4.5.3.1.3: a path is at most 256 octets with its angle brackets, so an address at most 254, in
  // whichever form it goes (the domain in UTF-8 beside a non-ASCII local part, SMTPUTF8; else its ASCII form).
  if (Buffer.byteLength(local, 'utf8') + 1 + Math.max(ascii.length, Buffer.byteLength(domain, 'utf8')) > 254) return false;
  const labels = ascii.split('.');
  return labels.length >= 2 && labels.every((l) => LABEL.test(l)) && !/^\d+$/.test(labels.at(-1)!);
}
