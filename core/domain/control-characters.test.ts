import { describe, expect, it } from 'vitest';
import { escapeControlCharacters } from './control-characters';

describe('escapeControlCharacters', () => {
  it('shows a tab, a line break and an escape sequence stored in a name as visible text on one line', () => {
    const shown = escapeControlCharacters('line1\nline2\tcol\u001b[31mRED\u0000\u0085');
    expect(shown).toBe('line1\\nline2\\tcol\\u001B[31mRED\\0\\u0085');
    expect(shown).not.toMatch(/\p{Cc}/u);
  });

  it('leaves macrons, CJK and emoji as they are, and doubles a backslash so an escape can be told from one typed', () => {
    expect(escapeControlCharacters('Tēnā koe 你好 👋🏽')).toBe('Tēnā koe 你好 👋🏽');
    expect(escapeControlCharacters('C:\\ngā')).toBe('C:\\\\ngā');
  });
});
