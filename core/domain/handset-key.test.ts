import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { handsetKey } from './handset-key';

describe('handsetKey', () => {
  it('keeps a number as its plus and digits, however it was written', () => {
    expect(handsetKey('+6421999001')).toBe('+6421999001');
    expect(handsetKey('6421999001')).toBe('+6421999001');
    expect(handsetKey(' +64 21 (999) 001 ')).toBe('+6421999001');
    expect(handsetKey('+64-21-999-001')).toBe('+6421999001');
  });

  it('reads a number written with the international prefix 00 as the international number', () => {
    expect(handsetKey('006421999001')).toBe('+6421999001');
    expect(handsetKey('00 64 21 999 001')).toBe('+6421999001');
    expect(handsetKey('+006421999001')).toBe('+6421999001');
    // An international number of 14 or 15 digits is 16 or 17 with its 00: still that number.
    expect(handsetKey('0010000000000000')).toBe('+10000000000000');
    expect(handsetKey('00 886 912 345 678 901')).toBe('+886912345678901');
    // No country code starts with 0: 000… is no international number, and stays as written.
    expect(handsetKey('0006421999001')).toBe('+0006421999001');
  });

  it('keeps a national number apart from the international one, and other addresses as written', () => {
    expect(handsetKey('021999001')).toBe('+021999001');
    expect(handsetKey('kōrero@example.nz')).toBe('kōrero@example.nz');
    expect(handsetKey('whatsapp:+6421999001')).toBe('whatsapp:+6421999001');
    expect(handsetKey('1234567890123456')).toBe('1234567890123456');
  });

  it('gives one key for a number with or without its plus and separators, and is idempotent', () => {
    const separator = fc.constantFrom('', ' ', '-', '.', '(', ')');
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,15}$/), fc.array(separator, { maxLength: 15 }), fc.boolean(), (digits, seps, plus) => {
        const written = (plus ? '+' : '') + [...digits].map((d, i) => d + (seps[i] ?? '')).join('');
        const key = handsetKey(written);
        expect(key).toBe(/^00[1-9]/.test(digits) ? `+${digits.slice(2)}` : `+${digits}`);
        expect(handsetKey(key)).toBe(key);
      }),
    );
  });

  it('leaves anything that is not a phone number unchanged', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        fc.pre(!/^\+?[0-9]{1,15}$/.test(text.trim().replace(/[\s().-]/g, '')));
        expect(handsetKey(text)).toBe(text);
      }),
    );
  });
});
