import { describe, expect, it } from 'vitest';
import { GSM7_BASIC, GSM7_EXTENSION, decodeGsm7, encodeGsm7, gsm7Length, isGsm7 } from './gsm7';

describe('GSM 03.38 7-bit default alphabet', () => {
  it('has 128 basic characters with the escape at 0x1B', () => {
    expect(GSM7_BASIC.length).toBe(128);
    expect(GSM7_BASIC.charCodeAt(0x1b)).toBe(0x1b);
    expect(GSM7_BASIC[0x00]).toBe('@');
    expect(GSM7_BASIC[0x02]).toBe('$');
    expect(GSM7_BASIC[0x11]).toBe('_');
    expect(GSM7_BASIC[0x24]).toBe('¤');
    expect(GSM7_BASIC[0x40]).toBe('¡');
    expect(GSM7_BASIC[0x7f]).toBe('à');
  });

  it('accepts plain text, accents and Greek capitals of the default alphabet', () => {
    expect(isGsm7('Hello, world! 123')).toBe(true);
    expect(isGsm7('Ça coûte 5€? Où ça? ÆØÅ æøå ÄÖÑÜ§ ¿¡ ΔΦΓΛΩΠΨΣΘΞ')).toBe(false); // û is not in the table
    expect(isGsm7('Ça va? Où? ÆØÅ æøå ÄÖÑÜ§ ¿¡ ΔΦΓΛΩΠΨΣΘΞ')).toBe(true);
  });

  it('counts extension characters as two septets', () => {
    expect(gsm7Length('abc')).toBe(3);
    expect(gsm7Length('€')).toBe(2);
    expect(gsm7Length('[~]{|}^\\\f€')).toBe(20);
    expect(gsm7Length('x€y')).toBe(4);
  });

  it('rejects characters outside the alphabet, emoji and lower-case Greek', () => {
    expect(gsm7Length('hi 😀')).toBe(-1);
    expect(isGsm7('`')).toBe(false);
    expect(isGsm7('δ')).toBe(false);
    expect(isGsm7('日本')).toBe(false);
  });

  it('reads code units as they come: a decomposed é, ñ or ā is a letter and a combining mark it does not have (planSms composes first)', () => {
    for (const letter of ['é', 'ñ', 'Ä', 'Å']) {
      expect(isGsm7(letter)).toBe(true);
      expect(isGsm7(letter.normalize('NFD'))).toBe(false);
    }
    expect(gsm7Length('Cafe\u0301 Rene\u0301e')).toBe(-1);
    expect(gsm7Length('Caf\u00e9 Ren\u00e9e')).toBe(10);
    expect(isGsm7('ma\u0304')).toBe(false);
    expect(isGsm7('m\u0101')).toBe(false); // ā is not GSM, composed or not
  });

  it('encodes unpacked septets with 0x1B escapes and decodes them back', () => {
    expect(encodeGsm7('@A€').toString('hex')).toBe('00411b65');
    const all = GSM7_BASIC.replace('\x1b', '') + [...GSM7_EXTENSION.values()].join('');
    const bytes = encodeGsm7(all);
    expect(bytes.length).toBe(127 + 2 * GSM7_EXTENSION.size);
    expect(decodeGsm7(bytes)).toBe(all);
  });

  it('throws when asked to encode a character it does not have', () => {
    expect(() => encodeGsm7('ok 😀')).toThrow(RangeError);
  });

  it('shows the basic character for an unknown escape and drops a trailing escape', () => {
    expect(decodeGsm7(Buffer.from([0x1b, 0x41, 0x42, 0x1b]))).toBe('AB');
  });
});
