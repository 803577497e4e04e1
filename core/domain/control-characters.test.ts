import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { checkNameText, escapeControlCharacters } from './control-characters';

describe('escapeControlCharacters', () => {
  it('shows a tab, a line break and an escape sequence stored in a name as visible text on one line', () => {
    const shown = escapeControlCharacters('line1\nline2\tcol\u001b[31mRED\u0000\u0085');
    expect(shown).toBe('line1\\nline2\\tcol\\u001B[31mRED\\0\\u0085');
    expect(shown).not.toMatch(/\p{Cc}/u);
  });

  it('shows a line or paragraph separator and a direction override stored in a name as visible text too', () => {
    // U+2028 splits a row for line-oriented tools (Python's splitlines, many editors); U+202E reorders it on screen.
    expect(escapeControlCharacters('one\u2028two\u2029three invoice \u202egpj.exe \u2066x\u2069')).toBe(
      'one\\u2028two\\u2029three invoice \\u202Egpj.exe \\u2066x\\u2069',
    );
  });

  it('leaves macrons, CJK and emoji as they are, and doubles a backslash so an escape can be told from one typed', () => {
    expect(escapeControlCharacters('Tēnā koe 你好 👋🏽')).toBe('Tēnā koe 你好 👋🏽');
    expect(escapeControlCharacters('C:\\ngā')).toBe('C:\\\\ngā');
  });
});

describe('checkNameText', () => {
  const refusal = (name: string): string | undefined => {
    try {
      checkNameText(name, 'name');
      return undefined;
    } catch (err) {
      expect(err).toBeInstanceOf(HermodError);
      return (err as HermodError).message;
    }
  };

  it('refuses a name that shows nothing: spaces, a zero-width space, a word joiner', () => {
    for (const name of ['   ', '\u200b', '\u3000\u00a0', '\u2060\u200d']) expect(refusal(name)).toBe('name has nothing visible; names are printable text');
  });

  it('refuses a line or paragraph separator and the direction controls that can disguise a name', () => {
    expect(refusal('one\u2028two')).toBe('name has a line separator (U+2028); names are one line');
    expect(refusal('one\u2029two')).toBe('name has a paragraph separator (U+2029); names are one line');
    for (const c of ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069'])
      expect(refusal(`invoice ${c}gpj.exe`)).toMatch(/^name has a direction control \(U\+20(2[A-E]|6[6-9])\) that can make a name read as another; /);
  });

  it('keeps names in any script, Arabic and Hebrew with their own direction included, and emoji with joiners', () => {
    for (const name of ['Kiritaki ā-rohe — 客户 👋🏽', 'عرض الربيع 2026', 'מבצע אביב', 'Whānau 👨‍👩‍👧', ' a ']) expect(refusal(name)).toBeUndefined();
  });

  it('refuses exactly the names with nothing visible, whatever they hold (property)', () => {
    const invisible = fc.constantFrom(' ', '\u00a0', '\u3000', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff');
    fc.assert(
      fc.property(fc.array(invisible, { minLength: 1, maxLength: 20 }), (cs) => {
        expect(refusal(cs.join(''))).toMatch(/nothing visible/);
      }),
    );
    fc.assert(
      fc.property(fc.array(invisible, { maxLength: 5 }), fc.constantFrom('a', 'ā', '你', '👋🏽', 'ب', '-'), (cs, visible) => {
        expect(refusal(cs.join('') + visible)).toBeUndefined();
      }),
    );
  });
});
