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
        expect(replyAddressKey(`+${digits}`)).toBe(digits);
      }),
    );
  });

  it('keeps numbers that differ in any digit apart', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{3,15}$/), fc.stringMatching(/^\d{3,15}$/), (a, b) => {
        fc.pre(a !== b);
        expect(replyAddressKey(a)).not.toBe(replyAddressKey(b));
      }),
    );
  });
});
