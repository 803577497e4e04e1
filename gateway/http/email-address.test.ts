import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isEmailAddress } from './email-address';

describe('isEmailAddress', () => {
  it.each([
    'ana@example.co.nz',
    'mere@kōrero.nz',
    'te.ao@māori.nz',
    '用户@例子.广告',
    'борис@пример.рф',
    'josé.garcía+news@correo.es',
    "o'brien@example.ie",
    'a@b.co',
    `${'a'.repeat(64)}@${Array.from({ length: 3 }, () => 'b'.repeat(60)).join('.')}.nz`,
  ])('takes %s', (address) => {
    expect(isEmailAddress(address)).toBe(true);
  });

  it.each([
    ['no at sign', 'ana.example.co.nz'],
    ['nothing before the at', '@example.com'],
    ['nothing after the at', 'ana@'],
    ['a one-label domain', 'ana@localhost'],
    ['two dots in a row', 'ana..mere@example.com'],
    ['a leading dot', '.ana@example.com'],
    ['a space', 'ana mere@example.com'],
    ['a no-break space', 'ana\u00a0mere@example.com'],
    ['a zero-width joiner', 'ana\u200d@example.com'],
    ['a label starting with a hyphen', 'ana@-example.com'],
    ['an all-digit top-level label', 'ana@example.123'],
    ['a top-level label a URL reads as a hex number', 'ana@example.0x1f'],
    ['a top-level label of only 0x', 'a@a.0x'],
    ['a local part over 64 bytes', `${'ā'.repeat(33)}@example.com`],
    ['a quoted local part', '"ana mere"@example.com'],
    ['an address literal', 'ana@[192.0.2.1]'],
    ['an address over the 254 octets SMTP carries', `${'a'.repeat(64)}@${Array.from({ length: 4 }, () => 'b'.repeat(50)).join('.')}.nz`],
    ['an address over 254 octets with its domain in UTF-8', `${'ā'.repeat(30)}@${'ō'.repeat(60)}.${'ō'.repeat(60)}.nz`],
  ])('refuses %s', (_why, address) => {
    expect(isEmailAddress(address)).toBe(false);
  });

  it('takes every dot-atom address of letters and digits, in any script, at any domain of two labels or more', () => {
    const word = fc.string({ unit: fc.constantFrom(...'abcxyz019ĀāōūīēŌ用户例子пример'.split('')), minLength: 1, maxLength: 10 });
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 3 }), fc.array(word, { minLength: 2, maxLength: 4 }), (local, domain) => {
        const address = `${local.join('.')}@${domain.join('.')}`;
        // A last label of digits, or 0x and hex digits, makes the host a number in a URL's eyes (an IPv4 address), not a domain.
        fc.pre(Buffer.byteLength(local.join('.'), 'utf8') <= 64 && !/^(\d+|0x[0-9a-f]*)$/i.test(domain.at(-1)!));
        expect(isEmailAddress(address)).toBe(true);
      }),
    );
  });

  it('never takes text with a control character, a space or no at sign, whatever else it holds', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.constantFrom(' ', '\t', '\n', '\u0000', '\u00a0'), fc.nat(), (text, bad, n) => {
        const i = n % (text.length + 1);
        expect(isEmailAddress(`${text.slice(0, i)}${bad}${text.slice(i)}@example.com`)).toBe(false);
        expect(isEmailAddress(text.replaceAll('@', ''))).toBe(false);
      }),
    );
  });
});
