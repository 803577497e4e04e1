import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { checkSenderAddress } from './sender-address';

describe('sender addresses', () => {
  it('take numbers and alphanumeric senders', () => {
    for (const ok of ['+6421000001', '5000', 'Hermod', 'SHOP-NZ', undefined]) expect(() => checkSenderAddress(ok, 'source')).not.toThrow();
  });

  it('refuse a macron, Cyrillic, CJK or an emoji, naming the field and the character', () => {
    expect(() => checkSenderAddress('Māori', 'mask')).toThrow('mask must be letters, digits and punctuation an SMSC can send from; "ā" cannot be');
    for (const bad of ['Привет', '你好', 'Shop👋🏽', 'a\0b']) expect(() => checkSenderAddress(bad, 'source')).toThrow(HermodError);
  });

  it('accept exactly the senders the SMPP writer can carry (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 11 }), (sender) => {
        const carriable = [...sender].every((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) <= 0x7e && c.length === 1);
        if (carriable) expect(() => checkSenderAddress(sender, 'source')).not.toThrow();
        else expect(() => checkSenderAddress(sender, 'source')).toThrow(HermodError);
      }),
    );
  });
});
