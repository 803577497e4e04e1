import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mailSubject } from './mail-subject';

/** 77 characters, none of them outside the BMP, so the 78th starts at UTF-16 unit 77. */
const LEAD = Array.from('Kia ora, e hoa mā — tēnā koe. Привет, 你好世界! '.repeat(3)).slice(0, 77).join('');

describe('the subject of an e-mail attempt', () => {
  it('is the first line of the text, or the template name', () => {
    expect(mailSubject(undefined, 'Kia ora, e hoa mā — tēnā koe 👋🏽\nsecond line')).toBe('Kia ora, e hoa mā — tēnā koe 👋🏽');
    expect(mailSubject('order_shipped', '你好世界')).toBe('order_shipped');
    expect(mailSubject(undefined, '\nПривет')).toBe('Message');
    // A line ends at CR LF or a lone CR too, with nothing of the break left in the subject.
    expect(mailSubject(undefined, 'Tēnā koe\r\nsecond line')).toBe('Tēnā koe');
    expect(mailSubject(undefined, 'Γειά σου\rδεύτερη')).toBe('Γειά σου');
    // Blanks before the break end nothing a reader sees.
    expect(mailSubject(undefined, 'Kia ora ē 🌏 \r\nsecond line')).toBe('Kia ora ē 🌏');
  });

  it('is the file named by the link of a media message without text', () => {
    expect(mailSubject(undefined, '', 'https://example.com/ng%C4%81/whakaahua%20ng%C4%81.png?size=large')).toBe('whakaahua ngā.png');
    expect(mailSubject(undefined, '', 'https://example.com/')).toBe('Message');
    expect(mailSubject(undefined, '', 'https://example.com/%E0%A4%A')).toBe('%E0%A4%A');
    expect(mailSubject(undefined, 'Titiro ki tēnei', 'https://example.com/a.png')).toBe('Titiro ki tēnei');
  });

  it('cuts a long line at 78 characters without splitting an emoji with a skin-tone modifier', () => {
    expect(mailSubject(undefined, `${LEAD}👋🏽🎉 and the rest`)).toBe(`${LEAD}👋🏽`);
    expect(mailSubject(undefined, `${LEAD}x👋🏽`)).toBe(`${LEAD}x`);
  });

  it('does not end with the space it was cut after', () => {
    expect(mailSubject(undefined, `${'a'.repeat(77)} past seventy-eight`)).toBe('a'.repeat(77));
    expect(mailSubject(undefined, `${'b'.repeat(76)}👋🏽 \u3000rest`)).toBe(`${'b'.repeat(76)}👋🏽`);
    // Whatever the words, wherever the spaces fall around the 78th character.
    const word = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((w) => w.trim() === w && !/[\r\n]/.test(w));
    const space = fc.constantFrom(' ', '  ', '\t', '\u3000', '\u00a0');
    fc.assert(
      fc.property(fc.array(fc.tuple(word, space), { minLength: 8, maxLength: 40 }), (words) => {
        const subject = mailSubject(undefined, words.map(([w, s]) => w + s).join(''));
        expect(subject).toBe(subject.trimEnd());
      }),
    );
  });

  it('is always well-formed text, a prefix of the first line, of at most 78 characters, ending in no space', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (text) => {
        const subject = mailSubject(undefined, text);
        // Well-formed: no lone surrogate (String#isWellFormed is past this project's lib target).
        expect(subject).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
        if (subject !== 'Message') expect(text.split(/\r\n|\r|\n/)[0]!.startsWith(subject)).toBe(true);
        expect(subject).toBe(subject.trimEnd());
        expect([...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(subject)].length).toBeLessThanOrEqual(78);
      }),
    );
  });

  it("keeps a link's encoded control characters encoded, so a file name cannot break the subject into another header", () => {
    expect(mailSubject(undefined, '', 'https://cdn.example.com/a%0D%0ABcc:%20evil@x.example.png')).toBe('a%0D%0ABcc:%20evil@x.example.png');
    expect(mailSubject(undefined, '', 'https://cdn.example.com/%00nul-ng%C4%81.png')).toBe('%00nul-ng%C4%81.png');
    expect(mailSubject(undefined, '', 'https://cdn.example.com/t%C4%93n%C4%81%09koe.png')).toBe('t%C4%93n%C4%81%09koe.png');
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), (name) => {
        const subject = mailSubject(undefined, '', `https://cdn.example.com/${encodeURIComponent(name)}`);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it looks for
        expect(subject).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      }),
    );
  });
});
