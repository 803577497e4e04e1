/**
 * GSM 03.38 (3GPP TS 23.038) 7-bit default alphabet and its extension table.
 * Over SMPP with data_coding 0x00 septets travel unpacked, one per octet,
 * which is what encodeGsm7/decodeGsm7 produce and read.
 */

/** The basic table, indexed by septet. 0x1B is the escape to the extension table. */
export const GSM7_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅå' +
  'Δ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ' +
  ' !"#¤%&\'()*+,-./' +
  '0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNO' +
  'PQRSTUVWXYZÄÖÑÜ§' +
  '¿abcdefghijklmno' +
  'pqrstuvwxyzäöñüà';

export const GSM7_ESCAPE = 0x1b;

/** Extension table: septet after the escape → character. */
export const GSM7_EXTENSION: ReadonlyMap<number, string> = new Map([
  [0x0a, '\f'],
  [0x14, '^'],
  [0x28, '{'],
  [0x29, '}'],
  [0x2f, '\\'],
  [0x3c, '['],
  [0x3d, '~'],
  [0x3e, ']'],
  [0x40, '|'],
  [0x65, '€'],
]);

const EXT_FLAG = 0x100;

// UTF-16 code unit → septet (0..0x7F), EXT_FLAG | extension septet, or -1.
// A flat table keeps the per-character test to one array read.
const ENCODE = new Int16Array(0x10000).fill(-1);
for (let i = 0; i < 128; i++) if (i !== GSM7_ESCAPE) ENCODE[GSM7_BASIC.charCodeAt(i)] = i;
for (const [septet, ch] of GSM7_EXTENSION) ENCODE[ch.charCodeAt(0)] = EXT_FLAG | septet;

const DECODE_EXT: string[] = [];
for (let i = 0; i < 128; i++) DECODE_EXT[i] = GSM7_EXTENSION.get(i) ?? GSM7_BASIC[i]!;

/** Septets a single UTF-16 code unit takes: 1, 2 (extension), or 0 when it is not in the alphabet. */
export function gsm7CharSeptets(code: number): 0 | 1 | 2 {
  const v = ENCODE[code]!;
  return v < 0 ? 0 : v & EXT_FLAG ? 2 : 1;
}

/** Septets `text` needs (extension characters count 2), or -1 if any character is not GSM-encodable. */
export function gsm7Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const v = ENCODE[text.charCodeAt(i)]!;
    if (v < 0) return -1;
    n += v & EXT_FLAG ? 2 : 1;
  }
  return n;
}

export function isGsm7(text: string): boolean {
  return gsm7Length(text) >= 0;
}

/**
 * Writes text[start, end) as unpacked septets into `target` at `offset` and
 * returns the offset after them. The caller has checked the text is
 * encodable and sized the target (gsm7Length).
 */
export function writeGsm7(text: string, start: number, end: number, target: Buffer, offset: number): number {
  let o = offset;
  for (let i = start; i < end; i++) {
    const v = ENCODE[text.charCodeAt(i)]!;
    if (v < 0) throw new RangeError(`character U+${text.charCodeAt(i).toString(16).padStart(4, '0')} is not in the GSM 7-bit alphabet`);
    if (v & EXT_FLAG) {
      target[o++] = GSM7_ESCAPE;
      target[o++] = v & 0x7f;
    } else {
      target[o++] = v;
    }
  }
  return o;
}

/** The whole text as unpacked septets; throws RangeError when it is not GSM-encodable. */
export function encodeGsm7(text: string): Buffer {
  const n = gsm7Length(text);
  const out = Buffer.allocUnsafe(n < 0 ? text.length * 2 : n);
  writeGsm7(text, 0, text.length, out, 0); // throws at the first character outside the alphabet
  return out;
}

/**
 * Unpacked septets → text. An escape followed by a septet that has no
 * extension character shows the basic character, as 23.038 asks; a trailing
 * escape is dropped. Octets above 0x7F are read modulo 128.
 */
export function decodeGsm7(buf: Uint8Array, start = 0, end = buf.length): string {
  let out = '';
  for (let i = start; i < end; i++) {
    const s = buf[i]! & 0x7f;
    if (s === GSM7_ESCAPE) {
      if (++i >= end) break;
      out += DECODE_EXT[buf[i]! & 0x7f];
    } else {
      out += GSM7_BASIC[s];
    }
  }
  return out;
}
