import { TextDecoder } from 'node:util';
import { parseContentType } from '../carriers/smtp/content-type';

/**
 * Just enough RFC 5322/2045/2047 reading for the SMTP sink to show what a
 * client sent: unfolded headers with encoded words decoded, and the first
 * text/plain body decoded from quoted-printable or base64 in its charset.
 * Not a general MIME parser: no nested message/rfc822, no attachments.
 */
export interface ReadMessage {
  /** Header names in lower case; repeated headers joined by a newline. */
  headers: Record<string, string>;
  subject: string;
  messageId: string;
  /** The text body, with line breaks as `\n`. */
  text: string;
}

export function readMessage(raw: Buffer): ReadMessage {
  // The line break before the closing dot ends the DATA, not the text.
  const { headers, body } = splitEntity(raw.subarray(0, raw.length - (raw.subarray(-2).toString() === '\r\n' ? 2 : 0)));
  return { headers, subject: headers.subject ?? '', messageId: headers['message-id'] ?? '', text: textOf(headers, body).replace(/\r\n/g, '\n') };
}

function splitEntity(raw: Buffer): { headers: Record<string, string>; body: Buffer } {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  const [end, gap] = crlf >= 0 && (lf < 0 || crlf < lf) ? [crlf, 4] : lf >= 0 ? [lf, 2] : [raw.length, 0];
  const headers: Record<string, string> = {};
  const unfolded = raw
    .subarray(0, end)
    .toString('utf8')
    .replace(/\r?\n(?=[ \t])/g, '');
  for (const line of unfolded.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = decodeWords(line.slice(colon + 1).trim());
    headers[name] = name in headers ? `${headers[name]}\n${value}` : value;
  }
  return { headers, body: raw.subarray(Math.min(raw.length, end + gap)) };
}

/** The first text/plain part (the entity itself when it is not multipart). */
function textOf(headers: Record<string, string>, body: Buffer): string {
  const type = parseContentType(headers['content-type'] ?? 'text/plain');
  if (type.value.startsWith('multipart/') && type.params.boundary) {
    for (const part of splitParts(body, type.params.boundary)) {
      const entity = splitEntity(part);
      const text = textOf(entity.headers, entity.body);
      if (text !== '') return text;
    }
    return '';
  }
  if (type.value !== 'text/plain') return '';
  return charset(type.params.charset).decode(decodeTransfer(body, headers['content-transfer-encoding']));
}

function splitParts(body: Buffer, boundary: string): Buffer[] {
  const lines = body.toString('latin1').split(/\r?\n/);
  const parts: string[][] = [];
  let current: string[] | undefined;
  for (const line of lines) {
    if (line.trimEnd() === `--${boundary}--`) break;
    if (line.trimEnd() === `--${boundary}`) parts.push((current = []));
    else current?.push(line);
  }
  return parts.map((p) => Buffer.from(p.join('\r\n'), 'latin1'));
}

function decodeTransfer(body: Buffer, encoding = ''): Buffer {
  switch (encoding.trim().toLowerCase()) {
    case 'base64':
      return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
    case 'quoted-printable':
      return decodeQuotedPrintable(
        body
          .toString('latin1')
          .replace(/[ \t]+(?=\r?\n)/g, '')
          .replace(/=\r?\n/g, ''),
      );
    default:
      return body;
  }
}

function decodeQuotedPrintable(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text[i] === '=' ? text.slice(i + 1, i + 3) : '';
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(text.charCodeAt(i) & 0xff);
  }
  return Buffer.from(bytes);
}

const ENCODED_WORD = /=\?([^?\s]+)\?([QqBb])\?([^?\s]*)\?=/g;

/** RFC 2047 words; adjacent words are joined before decoding, since an encoder may split a character across them. */
export function decodeWords(value: string): string {
  // Whitespace between two encoded words is not part of the text.
  const joined = value.replace(/(\?=)\s+(?==\?)/g, '$1');
  let out = '';
  let last = 0;
  let run: { charset: string; bytes: Buffer[] } | undefined;
  const flush = (): void => {
    if (run) out += charset(run.charset).decode(Buffer.concat(run.bytes));
    run = undefined;
  };
  for (const m of joined.matchAll(ENCODED_WORD)) {
    const [word, cs, enc, data] = m as unknown as [string, string, string, string];
    const at = m.index ?? 0;
    if (at > last) {
      flush();
      out += joined.slice(last, at);
    }
    const name = cs.split('*')[0]!.toLowerCase(); // drop an RFC 2231 language tag
    const bytes = enc.toUpperCase() === 'B' ? Buffer.from(data, 'base64') : decodeQuotedPrintable(data.replace(/_/g, ' '));
    if (run && run.charset !== name) flush();
    (run ??= { charset: name, bytes: [] }).bytes.push(bytes);
    last = at + word.length;
  }
  flush();
  return out + joined.slice(last);
}

function charset(name = 'utf-8'): TextDecoder {
  try {
    return new TextDecoder(name);
  } catch {
    return new TextDecoder('utf-8');
  }
}
