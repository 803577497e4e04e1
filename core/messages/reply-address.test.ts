import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replyAddressKey } from './reply-address';

describe('replyAddressKey', () => {
  it('compares numbers by their digits, with or without the plus and separators', () => {
    expect(replyAddressKey('+64 21-000 000')).toBe(replyAddressKey('6421000000'));
    expect(replyAddressKey(' 4000 ')).toBe('4000');
  });

  it('compares alphanumeric senders without regard to case, keeping non-ASCII letters', () => {
    expect(replyAddressKey('Acme')).toBe(replyAddressKey('ACME'));
    expect(replyAddressKey('Māori')).toBe(replyAddressKey('MĀORI'));
    expect(replyAddressKey('4000')).not.toBe(replyAddressKey('ACME'));
  });

  it('is idempotent and ignores a leading plus on any number', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 20 }), (address) => {
        const key = replyAddressKey(address);
        expect(replyAddressKey(key)).toBe(key);
      }),
    );
    fc.assert(
      fc.property(fc.stringMatching(/^\d{3,15}$/), (digits) => {
        expect(replyAddressKey(`+${digits}`)).toBe(replyAddressKey(digits));
        expect(replyAddressKey(digits)).toBe(/^00[1-9]/.test(digits) ? digits.slice(2) : digits);
      }),
    );
  });

  it('takes a number written with the international prefix 00 for the number itself, as handsets are', () => {
    expect(replyAddressKey('006421555000')).toBe(replyAddressKey('+6421555000'));
    expect(replyAddressKey('00 64 21-555 000')).toBe('6421555000');
    fc.assert(
      fc.property(fc.stringMatching(/^[1-9]\d{2,14}$/), (digits) => {
        expect(replyAddressKey(`00${digits}`)).toBe(replyAddressKey(`+${digits}`));
      }),
    );
    // A national number or short code keeps its zeros: 0800 is not 800.
    expect(replyAddressKey('0800123456')).toBe('0800123456');
  });

  it('keeps numbers that differ in any digit, beyond a leading 00, apart', () => {
    const international = (n: string): string => (/^00[1-9]/.test(n) ? n.slice(2) : n);
    fc.assert(
      fc.property(fc.stringMatching(/^\d{3,15}$/), fc.stringMatching(/^\d{3,15}$/), (a, b) => {
        fc.pre(international(a) !== international(b));
        expect(replyAddressKey(a)).not.toBe(replyAddressKey(b));
      }),
    );
  });
});
