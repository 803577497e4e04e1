/**
 * The encoding and segment rules of an SMS (GSM 03.38 / 03.40): which
 * alphabet a text needs, how many parts it takes, and its parts with their
 * concatenation headers. Core counts segments with them at intake; the SMPP
 * carrier and the SMSC simulator send what planSms gives.
 *
 * A text is measured and sent in Unicode NFC: decomposed text (NFD, "e" and
 * U+0301, as macOS and some CRMs export it) has the alphabet and the parts of
 * the same text precomposed, so a decomposed é goes as GSM's é, not as UCS-2.
 * The text kept and shown back stays as the client wrote it.
 */
import { HermodError } from '../../lib/errors';
import { gsm7CharSeptets, gsm7Length, writeGsm7 } from './gsm7';

/** The data coding of each alphabet: SMPP's data_coding (3.4 section 5.2.19) and GSM 03.38's DCS agree on both. */
export const DataCoding = { DEFAULT: 0x00, UCS2: 0x08 } as const;
/**
 * The data coding of a text in `dataCoding`'s alphabet (DataCoding) with a message class (1 ME, 2 SIM, 3 TE), as
 * GSM 03.38's general data coding group writes it (0x10: the class is meaningful; bits 3–2 the alphabet, 1–0 the
 * class) and as Kannel sends one: 0x11–0x13 for GSM 7-bit, 0x19–0x1B for UCS-2. No class (0 or absent): as it was.
 */
export function withMessageClass(dataCoding: number, smsClass: number | undefined): number {
  if (!smsClass || smsClass < 1 || smsClass > 3) return dataCoding;
  return 0x10 | (dataCoding & 0x0c) | smsClass;
}

/** SMPP's esm_class bit (GSM 03.40's TP-UDHI, the same bit) saying the message starts with a User Data Header. */
export const ESM_CLASS_UDHI = 0x40;

export type SmsEncoding = 'gsm7' | 'ucs2';

export const GSM7_SINGLE = 160;
export const GSM7_PART = 153;
export const UCS2_SINGLE = 70;
export const UCS2_PART = 67;
/** An 8-bit reference numbers at most 255 parts. */
export const MAX_PARTS = 255;
/**
 * Longest text hermod takes for an SMS, in characters (code points, as JSON
 * Schema counts them): a message on SMS Gateway v2 or Gateway v1, a
 * campaign's content or a template. Twilio's limit; ten or more parts.
 */
export const MAX_SMS_CHARACTERS = 1600;

const UDH_LENGTH = 6;

export interface SmsMeasure {
  encoding: SmsEncoding;
  /** Septets (GSM, extension characters counting 2) or UTF-16 code units (UCS-2). */
  units: number;
  /** Number of SMS the text takes. */
  count: number;
}

export interface SmsPlan extends SmsMeasure {
  /** short_message bodies, each including its concatenation UDH when count > 1. */
  segments: Buffer[];
  dataCoding: number;
  /** ESM_CLASS_UDHI when concatenated, else 0. */
  esmClass: number;
  /** The concatenation reference used (undefined for a single SMS). */
  reference?: number;
}

let nextReference = Math.floor(Math.random() * 256);

/** A rolling 8-bit concatenation reference. */
export function nextConcatReference(): number {
  nextReference = (nextReference + 1) & 0xff;
  return nextReference;
}

function isPair(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff || i + 1 >= text.length) return false;
  const d = text.charCodeAt(i + 1);
  return d >= 0xdc00 && d <= 0xdfff;
}

/** GSM parts of at most 153 septets, never splitting an escape sequence. */
function countGsmParts(text: string): number {
  let count = 1;
  let used = 0;
  for (let i = 0; i < text.length; i++) {
    const c = gsm7CharSeptets(text.charCodeAt(i));
    if (used + c > GSM7_PART) {
      count++;
      used = 0;
    }
    used += c;
  }
  return count;
}

/** UCS-2 parts of at most 67 code units, never splitting a surrogate pair. */
function countUcs2Parts(text: string): number {
  let count = 1;
  let used = 0;
  for (let i = 0; i < text.length; i++) {
    const c = isPair(text, i) ? 2 : 1;
    if (used + c > UCS2_PART) {
      count++;
      used = 0;
    }
    used += c;
    if (c === 2) i++;
  }
  return count;
}

function measureAsWritten(text: string): SmsMeasure {
  const septets = gsm7Length(text);
  if (septets >= 0) {
    return { encoding: 'gsm7', units: septets, count: septets <= GSM7_SINGLE ? 1 : countGsmParts(text) };
  }
  const units = text.length;
  return { encoding: 'ucs2', units, count: units <= UCS2_SINGLE ? 1 : countUcs2Parts(text) };
}

/**
 * Below U+0300 no character changes under NFC nor composes with its neighbour, so a text of them is its own NFC
 * form and skips normalize(); so is one of GSM characters alone (sms-segments.property.test checks both).
 */
const NFC_STABLE_BELOW = 0x300;

/** `text` in NFC. A GSM text, most of them, costs nothing more than the measure it already has. */
function composed(text: string, measure: SmsMeasure): string {
  if (measure.encoding === 'gsm7') return text;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= NFC_STABLE_BELOW) return text.normalize('NFC');
  return text;
}

/**
 * The form of `text` that is sent, with its measure: NFC, unless composing makes more parts (the few characters NFC
 * decomposes, as Devanagari's nukta letters U+0958–095F, make a text longer), then the text as written.
 */
function sentForm(text: string): { text: string; measure: SmsMeasure } {
  const measure = measureAsWritten(text);
  const nfc = composed(text, measure);
  if (nfc === text) return { text, measure };
  const nfcMeasure = measureAsWritten(nfc);
  return nfcMeasure.count <= measure.count ? { text: nfc, measure: nfcMeasure } : { text, measure };
}

/** Encoding and number of SMS for a text (in the form planSms sends it), without encoding it. */
export function measureSms(text: string): SmsMeasure {
  return sentForm(text).measure;
}

function writeUdh(buf: Buffer, o: number, ref: number, total: number, seq: number): number {
  buf[o] = 0x05; // UDHL
  buf[o + 1] = 0x00; // IEI: concatenated SMS, 8-bit reference
  buf[o + 2] = 0x03; // IEDL
  buf[o + 3] = ref;
  buf[o + 4] = total;
  buf[o + 5] = seq;
  return o + UDH_LENGTH;
}

/**
 * Encodes a text for SMPP in NFC: GSM 7-bit (unpacked, data_coding 0x00) when
 * every character is in the default alphabet or its extension table, else
 * UCS-2 (UTF-16BE, data_coding 0x08). Texts longer than one SMS become parts
 * with an 8-bit-reference concatenation UDH (05 00 03 ref total seq). All
 * segments are views into one buffer.
 */
export function planSms(text: string, options: { reference?: number } = {}): SmsPlan {
  const sent = sentForm(text);
  return encode(sent.text, sent.measure, options);
}

/**
 * planSms without composing: the parts of `text` exactly as written, as a handset that sends decomposed text
 * sends them. For what arrives (the SMSC simulator's replies), never for what hermod sends.
 */
export function planSmsAsWritten(text: string, options: { reference?: number } = {}): SmsPlan {
  return encode(text, measureAsWritten(text), options);
}

function encode(text: string, { encoding, units, count }: SmsMeasure, options: { reference?: number }): SmsPlan {
  if (count > MAX_PARTS) {
    throw new HermodError('invalid_attrib', `text needs ${count} SMS parts; at most ${MAX_PARTS} can be concatenated`, {
      fields: [{ field: 'content', description: `too long: ${count} parts` }],
    });
  }
  const gsm = encoding === 'gsm7';
  const dataCoding = gsm ? DataCoding.DEFAULT : DataCoding.UCS2;
  if (count === 1) {
    const body = Buffer.allocUnsafe(gsm ? units : units * 2);
    if (gsm) writeGsm7(text, 0, text.length, body, 0);
    else writeUcs2(text, 0, text.length, body, 0);
    return { encoding, units, count, segments: [body], dataCoding, esmClass: 0 };
  }

  const ref = (options.reference ?? nextConcatReference()) & 0xff;
  const buf = Buffer.allocUnsafe(count * UDH_LENGTH + (gsm ? units : units * 2));
  const segments: Buffer[] = [];
  const limit = gsm ? GSM7_PART : UCS2_PART;
  let segStart = 0;
  let o = writeUdh(buf, 0, ref, count, 1);
  let used = 0;
  let runStart = 0; // characters are copied in runs, one run per segment
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const c = gsm ? gsm7CharSeptets(code) : isPair(text, i) ? 2 : 1;
    if (used + c > limit) {
      o = gsm ? writeGsm7(text, runStart, i, buf, o) : writeUcs2(text, runStart, i, buf, o);
      segments.push(buf.subarray(segStart, o));
      segStart = o;
      o = writeUdh(buf, o, ref, count, segments.length + 1);
      used = 0;
      runStart = i;
    }
    used += c;
    if (c === 2 && !gsm) i++;
  }
  o = gsm ? writeGsm7(text, runStart, text.length, buf, o) : writeUcs2(text, runStart, text.length, buf, o);
  segments.push(buf.subarray(segStart, o));
  return { encoding, units, count, segments, dataCoding, esmClass: ESM_CLASS_UDHI, reference: ref };
}

/** UTF-16BE code units of text[start, end) into target at offset; returns the offset after them. */
export function writeUcs2(text: string, start: number, end: number, target: Buffer, offset: number): number {
  let o = offset;
  for (let i = start; i < end; i++) {
    const u = text.charCodeAt(i);
    target[o++] = u >>> 8;
    target[o++] = u & 0xff;
  }
  return o;
}
