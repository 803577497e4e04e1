import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { checkSenderAddress, claimedAddressProblem } from './sender-address';

describe('sender addresses', () => {
  it('take numbers and alphanumeric senders of up to 11 characters', () => {
    for (const ok of ['+6421000001', '5000', '006421000001', 'Hermod', 'SHOP-NZ', 'Air NZ', 'ABCDEFGHIJK', undefined])
      expect(() => checkSenderAddress(ok, 'source')).not.toThrow();
  });

  it('refuse a macron, Cyrillic, CJK or an emoji, naming the field and the character', () => {
    expect(() => checkSenderAddress('Māori', 'mask')).toThrow('mask must be letters, digits and punctuation an SMSC can send from; "ā" cannot be');
    for (const bad of ['Привет', '你好', 'Shop👋🏽', 'a\0b']) expect(() => checkSenderAddress(bad, 'source')).toThrow(HermodError);
  });

  it('refuse an alphanumeric sender of 12 characters, saying how long it may be', () => {
    expect(() => checkSenderAddress('ABCDEFGHIJKL', 'source')).toThrow('source as an alphanumeric sender must be at most 11 characters, not 12');
    expect(() => checkSenderAddress('TeReoMaori-NZ', 'source')).toThrow(HermodError);
  });

  it('refuse a number written with spaces or separators', () => {
    for (const bad of ['+64 21 555', '021-555-0123', '(09) 555', ' 5000', '+'])
      expect(() => checkSenderAddress(bad, 'source'), bad).toThrow('source must be a number of digits only');
  });

  it('refuse a blank sender, of nothing or only spaces, as blank', () => {
    for (const bad of ['', ' ', '           '])
      expect(() => checkSenderAddress(bad, 'mask'), JSON.stringify(bad)).toThrow('mask is blank; give a sender or leave the field out');
  });

  it('accept a sender exactly when it is a number, or printable ASCII with a letter in at most 11 characters (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 14 }), fc.stringMatching(/^\+?[0-9 -]{1,15}$/)), (sender) => {
        const number = /^\+?\d+$/.test(sender);
        const carriable = [...sender].every((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) <= 0x7e && c.length === 1);
        const alphanumeric = carriable && /[A-Za-z]/.test(sender) && sender.length <= 11;
        if (number || alphanumeric) expect(() => checkSenderAddress(sender, 'source')).not.toThrow();
        else expect(() => checkSenderAddress(sender, 'source')).toThrow(HermodError);
      }),
    );
  });
});

describe('addresses an application claims', () => {
  it('are claimable exactly when a send could use them as its sender (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 14 }), fc.stringMatching(/^\+?[0-9 ()-]{1,15}$/)), (address) => {
        const sendable = (() => {
          try {
            checkSenderAddress(address, 'source');
            return true;
          } catch {
            return false;
          }
        })();
        expect(claimedAddressProblem(address) === undefined, JSON.stringify(address)).toBe(sendable);
      }),
    );
  });

  it('name a number written with separators and how a send takes it', () => {
    expect(claimedAddressProblem('(09) 555-0123')).toBe(
      'source address "(09) 555-0123" cannot be sent from: write a number without spaces or dashes: 095550123',
    );
    expect(claimedAddressProblem('+64.21.555')).toBe('source address "+64.21.555" cannot be sent from: write a number without spaces or dashes: +6421555');
    expect(claimedAddressProblem('#')).toBe(
      'source address "#" cannot be sent from: write a number of digits (a leading + for an international one) or an alphanumeric sender with a letter',
    );
  });
});
