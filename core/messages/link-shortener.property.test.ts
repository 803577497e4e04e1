import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countSegments } from './segments';
import { MAX_SMS_CHARACTERS } from '../domain/sms-segments';
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

/** Whether the message shortened (`shortened`, codes as X) would take more SMS parts than as written, or pass 1,600 characters. */
const costsMore = (written: string, shortened: string): boolean =>
  countSegments(shortened) > countSegments(written) || [...shortened].length > MAX_SMS_CHARACTERS;

/** What ends a URL written without a space after it. */
const stop = fc.oneof(fc.constantFrom(...EMOJI), fc.constantFrom(...SYMBOLS), fc.constantFrom(...SPACES), fc.constantFrom(...CJK_PUNCTUATION));
const text = fc.string({ unit: 'grapheme', maxLength: 20 }).filter((t) => !/https?:/i.test(t));
const opening = fc.constantFrom('', ' ', '\n', '：', '「', '“', '«', '（', '(');

/** More path after a URL that keeps it one URL: the URL is then the start of a longer one. */
const extension = fc
  .tuple(
    fc.array(fc.constantFrom('/', 'a', 'y', '0', '-', '_', '.', 'ā', 'п', '你好', '%C4%81', '?q=2', '#top', '(x)'), { maxLength: 6 }),
    fc.constantFrom('/', 'y', 'ā', '你', '9', '%20', '[1]'),
  )
  .map(([path, last]) => `/${path.join('')}${last}`);
/** What comes before a URL in a message of several: never a letter or digit, so the URL starts a link. */
const separator = fc.constantFrom(' ', '\n', '：', '「', '“', '«', '（', '(', '👋🏽 ');

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
    let rewritten = 0;
    await fc.assert(
      fc.asyncProperty(text, opening, url, stop, text, async (before, open, u, after, rest) => {
        const prefix = open === '' && before !== '' ? `${before} ` : `${before}${open}`;
        const shortener = createLinkShortener({ links: memoryLinks(), baseUrl: BASE });
        const m = message({ content: `${prefix}${u}${after}${rest}` });
        const written = m.content;
        await shortener.shorten([m]);
        // A short link longer than the URL that would cost a part more: the message keeps its URL as written.
        if (costsMore(written, `${prefix}${BASE}/XXXXXXXX${after}${rest}`)) {
          expect(m.content).toBe(written);
          return;
        }
        rewritten++;
        expect(m.content.startsWith(`${prefix}${BASE}/`)).toBe(true);
        const code = m.content.slice(prefix.length + BASE.length + 1, prefix.length + BASE.length + 9);
        expect(code).toMatch(/^[A-Za-z0-9]{8}$/);
        expect(m.content).toBe(`${prefix}${BASE}/${code}${after}${rest}`);
        expect(await shortener.resolve(code, { userAgent: 'test', ip: '127.0.0.1' })).toBe(u);
        await shortener.drain();
      }),
      { numRuns: 1000 },
    );
    // Most messages are one part either way: the short links are checked, not skipped.
    expect(rewritten).toBeGreaterThan(800);
  });

  it('replaces each URL where it was found when one URL begins another or a URL is written twice', async () => {
    const segment = fc.record({ before: text, open: separator, pick: fc.nat(), after: stop, rest: text });
    await fc.assert(
      fc.asyncProperty(
        url,
        fc.array(extension, { minLength: 1, maxLength: 2 }),
        fc.array(segment, { minLength: 2, maxLength: 5 }),
        async (u, exts, segments) => {
          // The URL, and longer URLs it begins; each segment writes one of them.
          const urls = [u, ...exts.map((e) => u + e)];
          const parts = segments.map((s) => ({ ...s, url: urls[s.pick % urls.length]! }));
          const content = parts.map((p) => `${p.before}${p.open}${p.url}${p.after}${p.rest}`).join('');
          expect(findUrls(content)).toEqual(parts.map((p) => p.url));
          const shortener = createLinkShortener({ links: memoryLinks(), baseUrl: BASE });
          const m = message({ content });
          await shortener.shorten([m]);
          if (costsMore(content, parts.map((p) => `${p.before}${p.open}${BASE}/XXXXXXXX${p.after}${p.rest}`).join(''))) {
            expect(m.content).toBe(content);
            return;
          }
          // Walk the result: the text around each URL byte for byte, a short link where each URL was.
          let at = 0;
          const codes: string[] = [];
          for (const p of parts) {
            const head = `${p.before}${p.open}${BASE}/`;
            expect(m.content.slice(at, at + head.length)).toBe(head);
            at += head.length;
            const code = m.content.slice(at, at + 8);
            expect(code).toMatch(/^[A-Za-z0-9]{8}$/);
            codes.push(code);
            at += 8;
            const tail = `${p.after}${p.rest}`;
            expect(m.content.slice(at, at + tail.length)).toBe(tail);
            at += tail.length;
          }
          expect(at).toBe(m.content.length);
          for (const [i, p] of parts.entries()) {
            expect(await shortener.resolve(codes[i]!, { userAgent: 'test', ip: '127.0.0.1' })).toBe(p.url);
          }
          await shortener.drain();
        },
      ),
      { numRuns: 1000 },
    );
  });
});
