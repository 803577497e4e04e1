import { domainToASCII } from 'node:url';
import type { SendMailOptions } from 'nodemailer/lib/mailer';
import type { OutboundJob } from '../../../core/ports/bus-payloads';
import { type ReturnPaths, verpAddress } from './verp';

const ADDRESS = /^[^\s@<>()[\]",;:\\]+@[^\s@<>()[\]",;:\\]+$/;

export const looksLikeAddress = (value: string): boolean => ADDRESS.test(value);

/**
 * The e-mail for one job: plain text only. A media message carries its link
 * on its own line; the file is never fetched or attached, so a caller's URL
 * cannot make this process read from the network or the disk. With return
 * paths (a bounce domain and secret), the envelope sender is the message's
 * own return path (verp.ts).
 */
export function mailOptions(job: OutboundJob, defaultFrom: string, returnPaths?: ReturnPaths): SendMailOptions {
  const url = job.im?.media?.url;
  const headers: Record<string, string> = { 'X-Hermod-Message-Id': job.id };
  if (job.im?.reference) headers['X-Hermod-Reference'] = job.im.reference;
  const from = looksLikeAddress(job.source) ? job.source : defaultFrom;
  const returnPath = returnPaths ? verpAddress(job.id, returnPaths) : undefined;
  const to = withAsciiDomain(job.destination);
  return {
    from,
    to,
    messageId: `<${job.id}@${returnPaths?.domain || domainOf(from) || domainOf(defaultFrom) || 'localhost'}>`,
    ...(returnPath ? { envelope: { from: returnPath, to } } : {}),
    subject: literalSubject(job.im?.subject || 'Message'),
    // A media message without text of its own has its link as its text: said once.
    text: url && job.content !== url ? [job.content, url].filter((part) => part !== '').join('\n') : job.content,
    headers,
  };
}

/** An RFC 2047 encoded word as a mail reader finds one in a header. */
const ENCODED_WORD = /=\?[^?\s]+\?[bBqQ]\?[^?\s]*\?=/;
/** Bytes of UTF-8 per encoded word: its base64 (60 characters) and `=?UTF-8?B?…?=` stay within RFC 2047's 75. */
const WORD_BYTES = 45;

/**
 * A subject holding what reads as an encoded word (`=?UTF-8?B?SGFjaw==?=`) is sent encoded itself, whole, as RFC 2047
 * asks of such text meant literally: sent as it is, every mail reader showed what it decodes to (`Hack`). Each encoded
 * word holds whole characters. Any other subject goes as nodemailer writes it.
 */
function literalSubject(subject: string): string {
  if (!ENCODED_WORD.test(subject)) return subject;
  const words: string[] = [];
  let word = '';
  for (const ch of subject) {
    if (Buffer.byteLength(word + ch) > WORD_BYTES) {
      words.push(word);
      word = '';
    }
    word += ch;
  }
  words.push(word);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w).toString('base64')}?=`).join(' ');
}

/**
 * The domain of a sender written `a@b` or `Name <a@b>`, in ASCII, for the right of the Message-ID: the job's own id on
 * the left makes every copy of one job's mail (sent again after its relay's answer was lost) the same message to the
 * mail systems that receive it (RFC 5322 §3.6.4), which drop the copy.
 */
function domainOf(from: string): string {
  const address = /<([^<>]*)>\s*$/.exec(from)?.[1] ?? from;
  const at = address.lastIndexOf('@');
  const domain = at < 0 ? '' : domainToASCII(address.slice(at + 1).trim());
  // A dot-atom of host labels only (`example.com.` or `a..b` are not one): else the id takes another domain.
  return /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(domain) ? domain : '';
}

/**
 * A mailbox at an internationalised domain (`ana@whānau.nz`) by its domain's
 * ASCII form (`ana@xn--whnau-gwa.nz`): the same mailbox (RFC 5890), and what a
 * relay without SMTPUTF8 takes in RCPT TO and the To header, where the UTF-8
 * form went out raw and would be refused or mangled. A local part in another
 * script has no ASCII form: it still needs a relay with SMTPUTF8.
 */
function withAsciiDomain(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 0) return address;
  const domain = domainToASCII(address.slice(at + 1));
  return domain ? `${address.slice(0, at)}@${domain}` : address;
}
