import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { message } from '../adapters/history-contract';
import type { LinkStore, ShortLinkRecord } from '../ports/link-store';
import { createLinkShortener, findUrls } from './link-shortener';

const BASE = 'https://localhost:18443/l';

/** Every symbol (So, Sk) outside ASCII: what people write after a link is not part of it. */
const SYMBOLS: string[] = [];
for (let cp = 0x80; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const ch = String.fromCodePoint(cp);
  if (/[\p{So}\p{Sk}]/u.test(ch)) SYMBOLS.push(ch);
}

/** Emoji as written: skin tones, ZWJ sequences, variation selectors (both presentations), keycaps, flags and tag flags. */
const EMOJI = ['👍🏽', '👋🏿', '👩🏽‍💻', '👨‍👩‍👧‍👦', '🏳️‍🌈', '❤️', '☺︎', '✌🏻', '1️⃣', '#️⃣', '*️⃣', '🇳🇿', '🇨🇳', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '‼️', 'ℹ️', '™️', '🎉'];
const SPACES = [' ', '\n', '\t', '\u00a0', '\u3000', '\u2007', '\u2009', '\u202f', '\u205f'];
const CJK_PUNCTUATION = ['。', '、', '，', '！', '？', '：', '；', '」', '』', '）', '】', '〜', '…', '︐', '﹒', '”', '’', '»'];

/**
 * A URL as people write one: any host, then non-ASCII letters, percent-escapes, URL punctuation and balanced
 * parentheses, ending as a link does (not on the punctuation that ends a sentence).
 */
const host = fc.constantFrom('example.com', 'localhost:8080', '例子.中国', 'пример.рф', 'māori.nz', '10.0.0.1');
const url = fc.oneof(
  fc.tuple(fc.constantFrom('http', 'https', 'HTTPS'), host).map(([scheme, h]) => `${scheme}://${h}`),
  fc
    .tuple(
      fc.constantFrom('http', 'https', 'HTTPS'),
      host,
      fc.array(
        fc.constantFrom(
          ...['/', 'a', 'Z', '0', '9', '-', '_', '.', ',', ';', ':', '!', '~', '*', '+', '=', '&', '@', '$', 'ā', 'ngā-hua', 'п', '你好', 'ق'],
          ...['%C4%81', '%F0%9F%91%8D', '?q=1', '#top', '(x)', '[0]'],
        ),
        { maxLength: 12 },
      ),
      fc.constantFrom('/', 'a', 'ā', 'п', '你', '0', '%20', '(reo)', '[1]'),
    )
    .map(([scheme, h, path, last]) => `${scheme}://${h}/${path.join('')}${last}`),
);

/** What ends a URL written without a space after it. */
const stop = fc.oneof(fc.constantFrom(...EMOJI), fc.constantFrom(...SYMBOLS), fc.constantFrom(...SPACES), fc.constantFrom(...CJK_PUNCTUATION));
const text = fc.string({ unit: 'grapheme', maxLength: 20 }).filter((t) => !/https?:/i.test(t));
const opening = fc.constantFrom('', ' ', '\n', '：', '「', '“', '«', '（', '(');

function memoryLinks(): LinkStore {
  const links = new Map<string, ShortLinkRecord>();
  return {
    insertShortLinks: async (batch) => {
      for (const l of batch) links.set(l.code, l);
    },
    getShortLink: async (code) => links.get(code),
    recordLinkClicks: async () => undefined,
    countLinkClicks: async () => 0,
  };
}

describe('link shortening (property)', () => {
  it('finds exactly the URL when an emoji, a symbol, a space or CJK punctuation follows it', () => {
    fc.assert(
      fc.property(text, opening, url, stop, text, (before, open, u, after, rest) => {
        const prefix = open === '' && before !== '' ? `${before} ` : `${before}${open}`;
        expect(findUrls(`${prefix}${u}${after}${rest}`)).toEqual([u]);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps everything outside the URL byte for byte, and the short link leads exactly to the URL', async () => {
    await fc.assert(
      fc.asyncProperty(text, opening, url, stop, text, async (before, open, u, after, rest) => {
        const prefix = open === '' && before !== '' ? `${before} ` : `${before}${open}`;
        const shortener = createLinkShortener({ links: memoryLinks(), baseUrl: BASE });
        const m = message({ content: `${prefix}${u}${after}${rest}` });
        await shortener.shorten([m]);
        expect(m.content.startsWith(`${prefix}${BASE}/`)).toBe(true);
        const code = m.content.slice(prefix.length + BASE.length + 1, prefix.length + BASE.length + 9);
        expect(code).toMatch(/^[A-Za-z0-9]{8}$/);
        expect(m.content).toBe(`${prefix}${BASE}/${code}${after}${rest}`);
        expect(await shortener.resolve(code, { userAgent: 'test', ip: '127.0.0.1' })).toBe(u);
        await shortener.drain();
      }),
      { numRuns: 1000 },
    );
  });
});
