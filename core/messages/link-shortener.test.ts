import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createChdbHistory } from '../adapters/chdb-history';
import { message } from '../adapters/history-contract';
import type { History } from '../ports/history';
import { createLinkShortener, findUrls } from './link-shortener';

describe('link shortening', () => {
  let history: History | undefined;
  afterEach(async () => {
    await history?.close();
    history = undefined;
  });

  it('finds URLs in text without the punctuation that ends a sentence', () => {
    expect(findUrls('See https://example.com/a?b=1. Or http://x.io/y!')).toEqual(['https://example.com/a?b=1', 'http://x.io/y']);
    expect(findUrls('no links here, not even example.com')).toEqual([]);
  });

  it('ends a URL where world text around it says so: CJK punctuation, typographic quotes, an ellipsis', () => {
    expect(findUrls('你的订单：https://shop.example/orders/42?x=1。谢谢 👋🏽')).toEqual(['https://shop.example/orders/42?x=1']);
    expect(findUrls('详情见https://shop.example/a，或者https://shop.example/b！')).toEqual(['https://shop.example/a', 'https://shop.example/b']);
    expect(findUrls('Tirohia “https://shop.example/tēnā-koe”… «https://shop.example/привет»')).toEqual([
      'https://shop.example/tēnā-koe',
      'https://shop.example/привет',
    ]);
  });

  it('ends a URL before an emoji written right after it: skin tones, ZWJ sequences, variation selectors, keycaps, flags', () => {
    expect(findUrls('Tēnā https://example.com/ngā-hua👍🏽 koe')).toEqual(['https://example.com/ngā-hua']);
    expect(findUrls('https://example.com/mahi👩🏽‍💻 https://example.com/aroha❤️ https://example.com/kōrero☺︎')).toEqual([
      'https://example.com/mahi',
      'https://example.com/aroha',
      'https://example.com/kōrero',
    ]);
    expect(findUrls('https://example.com/wāhanga-2#️⃣ https://example.com/wāhanga-3️⃣ https://example.com/nz🇳🇿 https://example.com/cy🏴󠁧󠁢󠁷󠁬󠁳󠁿')).toEqual([
      'https://example.com/wāhanga-2',
      'https://example.com/wāhanga-',
      'https://example.com/nz',
      'https://example.com/cy',
    ]);
    expect(findUrls('https://example.com/a‼️ https://example.com/bℹ️ https://example.com/c✓ https://example.com/d©')).toEqual([
      'https://example.com/a',
      'https://example.com/b',
      'https://example.com/c',
      'https://example.com/d',
    ]);
  });

  it('keeps non-ASCII letters, percent-escapes and balanced parentheses in a URL, and ends it at any space or CJK punctuation', () => {
    expect(findUrls('https://mi.wikipedia.org/wiki/Te_reo_Māori_(reo) https://例子.中国/路径/文件%E2%9C%93 https://пример.рф/путь')).toEqual([
      'https://mi.wikipedia.org/wiki/Te_reo_Māori_(reo)',
      'https://例子.中国/路径/文件%E2%9C%93',
      'https://пример.рф/путь',
    ]);
    expect(findUrls('(kei https://example.com/a_(b)). [https://example.com/c]')).toEqual(['https://example.com/a_(b)', 'https://example.com/c']);
    expect(findUrls('https://example.com/a\u00a0b https://example.com/c\u3000d https://example.com/e\u202ff')).toEqual([
      'https://example.com/a',
      'https://example.com/c',
      'https://example.com/e',
    ]);
    expect(findUrls('「https://例子.中国/路径」、https://例子.中国/a。https://例子.中国/b！（https://例子.中国/c）')).toEqual([
      'https://例子.中国/路径',
      'https://例子.中国/a',
      'https://例子.中国/b',
      'https://例子.中国/c',
    ]);
  });

  it('ends a URL at an em dash, a non-ASCII currency sign or a closing brace it did not open, and keeps balanced braces and en dashes inside it (API trial, review)', () => {
    expect(findUrls('see https://example.com/dddd—today, https://example.com/e―f or https://example.com/g– next')).toEqual([
      'https://example.com/dddd',
      'https://example.com/e',
      'https://example.com/g',
    ]);
    expect(findUrls('https://en.wikipedia.org/wiki/Mexican–American_War and https://en.wikipedia.org/wiki/1990–91_NHL_season‐')).toEqual([
      'https://en.wikipedia.org/wiki/Mexican–American_War',
      'https://en.wikipedia.org/wiki/1990–91_NHL_season',
    ]);
    expect(
      findUrls('{https://example.com/aaaa} https://example.com/utu€5 https://example.com/£ https://example.com/{id}/x?p=$1 https://example.com/a฿'),
    ).toEqual(['https://example.com/aaaa', 'https://example.com/utu', 'https://example.com/', 'https://example.com/{id}/x?p=$1', 'https://example.com/a']);
  });

  it('finds a link exactly, whatever world text comes before it and whatever follows a stop after it (property)', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 30 }).filter((t) => !/https?:/i.test(t));
    const path = fc.array(fc.constantFrom('a', 'Z', '0', '-', '_', '/', 'ā', 'п', '你', '%C4%81', '?q=1', '#top'), { maxLength: 12 }).map((p) => p.join(''));
    const stop = fc.constantFrom(' ', '\n', '。', '，', '：', '」', '！', '？', '…', '”', '’', '»', '、', '—', '―', '€', '฿');
    const before = fc.constantFrom(' ', '\n', '：', '「', '“', '«', '（');
    fc.assert(
      fc.property(text, before, path, stop, text, (prefix, open, p, close, suffix) => {
        const url = `https://shop.example/${p}`.replace(/[.,!?;:)\]]+$/, '');
        expect(findUrls(`${prefix}${open}${url}${close}${suffix}`)[0]).toBe(url);
      }),
    );
  });

  it('keeps the rest of a world-text message as it was when it shortens the link in it', async () => {
    history = await createChdbHistory({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-links-')) });
    const shortener = createLinkShortener({ links: history, baseUrl: 'https://s.example/l/' });
    const m = message({ content: 'Kia ora! 你的订单：https://shop.example/orders/42?x=1。谢谢 👋🏽' });
    await shortener.shorten([m]);
    expect(m.content).toMatch(/^Kia ora! 你的订单：https:\/\/s\.example\/l\/[A-Za-z0-9]{8}。谢谢 👋🏽$/);
    expect(await shortener.resolve(findUrls(m.content)[0]!.split('/').pop()!, { userAgent: 'test', ip: '127.0.0.1' })).toBe(
      'https://shop.example/orders/42?x=1',
    );
  });

  it('keeps an emoji written right after a URL in the message, after the short link (user trial)', async () => {
    history = await createChdbHistory({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-links-')) });
    const shortener = createLinkShortener({ links: history, baseUrl: 'https://localhost:18443/l' });
    const m = message({ content: 'Tēnā https://example.com/ngā-hua👍🏽 koe' });
    await shortener.shorten([m]);
    expect(m.content).toMatch(/^Tēnā https:\/\/localhost:18443\/l\/[A-Za-z0-9]{8}👍🏽 koe$/u);
    expect(await shortener.resolve(findUrls(m.content)[0]!.split('/').pop()!, { userAgent: 'test', ip: '127.0.0.1' })).toBe('https://example.com/ngā-hua');
  });

  it('replaces each URL where it was found, when one URL begins another or its text appears elsewhere in the message', async () => {
    history = await createChdbHistory({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-links-')) });
    const shortener = createLinkShortener({ links: history, baseUrl: 'https://localhost:18443/l' });
    const m = message({
      content:
        'Kia ora 👋🏽 tirohia https://example.com/x（概要）me https://example.com/x/y👍🏽 — 再次：https://example.com/x。' +
        'Hoki mai: https://r.example/?to=https://example.com/x ka kite 🇳🇿',
    });
    await shortener.shorten([m]);
    const short = /^https:\/\/localhost:18443\/l\/([A-Za-z0-9]{8})$/;
    const found = findUrls(m.content);
    expect(found).toHaveLength(4);
    const [x, xy, again, redirect] = found.map((u) => short.exec(u)?.[1]);
    expect(m.content).toBe(
      `Kia ora 👋🏽 tirohia https://localhost:18443/l/${x}（概要）me https://localhost:18443/l/${xy}👍🏽 — 再次：https://localhost:18443/l/${again}。` +
        `Hoki mai: https://localhost:18443/l/${redirect} ka kite 🇳🇿`,
    );
    expect(again).toBe(x);
    const click = { userAgent: 'test', ip: '127.0.0.1' };
    expect(await shortener.resolve(x!, click)).toBe('https://example.com/x');
    expect(await shortener.resolve(xy!, click)).toBe('https://example.com/x/y');
    expect(await shortener.resolve(redirect!, click)).toBe('https://r.example/?to=https://example.com/x');
    await shortener.drain();
  });

  it('replaces each URL with a short link that resolves back to it and counts every click', async () => {
    history = await createChdbHistory({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-links-')) });
    const shortener = createLinkShortener({ links: history, baseUrl: 'https://s.example/l/' });
    const m = message({ content: 'Offer: https://shop.example/deal?id=7. Twice: https://shop.example/deal?id=7' });
    await shortener.shorten([m]);
    const short = findUrls(m.content);
    expect(short).toHaveLength(2);
    expect(short[0]).toMatch(/^https:\/\/s\.example\/l\/[A-Za-z0-9]{8}$/);
    expect(short[1]).toBe(short[0]);
    const code = short[0]!.split('/').pop()!;
    expect(await shortener.resolve(code, { userAgent: 'test', ip: '127.0.0.1' })).toBe('https://shop.example/deal?id=7');
    expect(await shortener.resolve(code, { userAgent: 'test', ip: '127.0.0.1' })).toBe('https://shop.example/deal?id=7');
    await shortener.drain();
    expect(await history.countLinkClicks(code)).toBe(2);
    await expect(shortener.resolve('zzzzzzzz', { userAgent: '', ip: '' })).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('link shortening that would make a message longer', () => {
  let history: History | undefined;
  afterEach(async () => {
    await history?.close();
    history = undefined;
  });

  it('leaves a message as written when its short links would cost a part more or take it past 1,600 characters (user trial)', async () => {
    history = await createChdbHistory({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-links-')) });
    const shortener = createLinkShortener({ links: history, baseUrl: 'https://localhost:25443/l' });
    const atTheLimit = message({ content: `${'a'.repeat(1576)} http://a.co http://a.co` });
    // GSM-7 (no macron: one would make it UCS-2), 145 characters: one part, where the short link makes it 168, two.
    const onePart = message({ content: `Kia ora e hoa, ${'ka pai te ra nei '.repeat(7)}http://a.co` });
    const longLink = message({ content: 'Tirohia https://shop.example/orders/2026/11/30/whakapapa?ref=pānui-raumati 👋🏽' });
    const [limitBefore, partBefore] = [atTheLimit.content, onePart.content];
    await shortener.shorten([atTheLimit, onePart, longLink]);
    expect(atTheLimit.content).toBe(limitBefore);
    expect(onePart.content).toBe(partBefore);
    // A link the short one is shorter than is still shortened.
    expect(longLink.content).toMatch(/^Tirohia https:\/\/localhost:25443\/l\/[A-Za-z0-9]{8} 👋🏽$/u);
  });
});
