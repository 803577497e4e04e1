import { randomBytes } from 'node:crypto';
import type { LinkClick, LinkStore, ShortLinkRecord } from '../ports/link-store';
import type { MessageRecord } from '../ports/message-history';
import { createBatcher } from '../../lib/batcher';
import { HermodError } from '../../lib/errors';
import { FifoMap } from '../../lib/fifo-map';

// A URL ends at white space, and at what ends one in world text without it: CJK and
// full-width punctuation (。，：「」…), typographic quotes (“ ” ‘ ’ « ») and an ellipsis.
// Without those, a Chinese sentence after a link became part of the link, and was lost from the message.
const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'\u3000-\u303f\uff00-\uffef\u2018-\u201f\u00ab\u00bb\u2026]+/gi;
const TRAILING_PUNCTUATION = /[.,!?;:)\]]+$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const CODE_LENGTH = 8;

function newCode(): string {
  const bytes = randomBytes(CODE_LENGTH);
  let code = '';
  for (const b of bytes) code += ALPHABET[b % ALPHABET.length];
  return code;
}

/** Every http(s) URL in a text, without the punctuation that usually follows one in a sentence. */
export function findUrls(text: string): string[] {
  return [...text.matchAll(URL_IN_TEXT)].map((m) => m[0].replace(TRAILING_PUNCTUATION, ''));
}

/**
 * SMS Gateway v2's link shortening: each URL in a message becomes
 * `<base>/<code>`, stored with the message before it is accepted; the gateway
 * redirects the short link and every click is recorded in history.
 */
export function createLinkShortener(deps: { links: LinkStore; baseUrl: string }) {
  const cache = new FifoMap<string, ShortLinkRecord>();
  const MAX_CACHED = 100_000;
  const remember = (link: ShortLinkRecord): void => {
    cache.set(link.code, link);
    if (cache.size > MAX_CACHED) cache.shift();
  };
  const clicks = createBatcher<LinkClick, void>(
    async (batch) => {
      await deps.links.recordLinkClicks(batch);
      return [];
    },
    { maxItems: 5000, maxDelayMs: 100, maxConcurrent: 1 },
  );
  const base = deps.baseUrl.replace(/\/+$/, '');

  return {
    /** Rewrites the content of these messages in place; resolves once the links are stored. */
    async shorten(records: MessageRecord[]): Promise<void> {
      const links: ShortLinkRecord[] = [];
      for (const r of records) {
        const urls = findUrls(r.content);
        if (urls.length === 0) continue;
        let content = r.content;
        for (const url of new Set(urls)) {
          const link = { code: newCode(), url, messageId: r.id, applicationId: r.applicationId, createdAt: r.acceptedAt };
          links.push(link);
          content = content.split(url).join(`${base}/${link.code}`);
        }
        r.content = content;
      }
      if (links.length === 0) return;
      await deps.links.insertShortLinks(links);
      for (const l of links) remember(l);
    },

    /** The target of a short link, recording the click. */
    async resolve(code: string, click: { userAgent: string; ip: string }): Promise<string> {
      if (!/^[A-Za-z0-9]{8}$/.test(code)) throw new HermodError('not_found', 'no such link');
      const link = cache.get(code) ?? (await deps.links.getShortLink(code));
      if (!link) throw new HermodError('not_found', 'no such link');
      remember(link);
      void clicks.add({ code, at: Date.now(), userAgent: click.userAgent.slice(0, 512), ip: click.ip }).catch(() => undefined);
      return link.url;
    },

    drain: () => clicks.drain(),
  };
}

export type LinkShortener = ReturnType<typeof createLinkShortener>;
