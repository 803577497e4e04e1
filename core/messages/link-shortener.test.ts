import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

  it('replaces each URL with a short link that resolves back to it and counts every click', async () => {
    history = await createChdbHistory({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-links-')) });
    const shortener = createLinkShortener({ history, baseUrl: 'https://s.example/l/' });
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
