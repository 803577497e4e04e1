import { countSegments } from './segments';
import { MAX_SMS_CHARACTERS } from '../domain/sms-segments';
import { randomBytes } from 'node:crypto';
import type { LinkClick, LinkStore, ShortLinkRecord } from '../ports/link-store';
import type { MessageRecord } from '../ports/message-history';
import { createVoidBatcher } from '../../lib/void-batcher';
import { HermodError } from '../../lib/errors';
import { FifoMap } from '../../lib/fifo-map';

// A URL ends at white space (any: NBSP and U+3000 too), controls and format characters (ZWJ, direction marks, tags),
// and at what ends one in world text without a space: CJK, full-width and vertical punctuation (。，：「」…, but not
// the katakana middle dot ・ found inside Japanese titles), typographic quotes (“ ” ‘ ’ « »), an ellipsis, and any
// emoji or symbol outside ASCII (So, Sk, pictographs, skin tones, emoji variation selectors, enclosing marks such as
// the keycap's; ASCII ^ and ` stay in it as before), an em dash or a horizontal bar (— ―: a URL's end in a sentence,
// never inside one), and a currency sign other than $ (€ £ ¥ ฿). A hyphen or an en dash (‐ – : Mexican–American_War)
// stays in it, but not at its end. Non-ASCII letters and marks (IRIs) and percent-escapes stay in it.
// Without those stops, a Chinese sentence or an emoji after a link became part of the link, and was lost from the message.
const URL_IN_TEXT =
  /\bhttps?:\/\/(?:(?!\ufe0e|\ufe0f)[^\s\p{Cc}\p{Cf}\p{So}\p{Sk}\p{Me}\p{Extended_Pictographic}<>"'\u3000-\u303f\ufe10-\ufe1f\ufe30-\ufe6f\uff00-\uffef\u2014\u2015\u2018-\u201f\u00ab\u00bb\u2026\p{Sc}]|[\^`$])+/giu;
/** What ends a sentence, or a phrase, right after a URL: never its last character (a hyphen or an en dash neither). */
const SENTENCE_PUNCTUATION = '.,!?;:\u2010\u2011\u2012\u2013';
const KEYCAP_BASE = '0123456789#*';
const EMOJI_SELECTORS = '\ufe0e\ufe0f\u20e3';

function count(text: string, ch: string): number {
  let n = 0;
  for (let i = text.indexOf(ch); i >= 0; i = text.indexOf(ch, i + 1)) n++;
  return n;
}

/**
 * How much of a match is the URL, as link detectors decide (linkify-it's rules): not the punctuation that ends a
 * sentence after it, not a closing parenthesis, bracket or brace it did not open, and not the digit, # or * that begins a
 * keycap emoji (1️⃣) written after it.
 */
function urlLength(text: string, start: number, found: string): number {
  let end = found.length;
  const next = text[start + end];
  if (next !== undefined && EMOJI_SELECTORS.includes(next) && KEYCAP_BASE.includes(found[end - 1]!)) end--;
  let parentheses = count(found, '(') - count(found, ')');
  let brackets = count(found, '[') - count(found, ']');
  let braces = count(found, '{') - count(found, '}');
  for (;;) {
    const last = found[end - 1]!;
    if (SENTENCE_PUNCTUATION.includes(last)) end--;
    else if (last === ')' && parentheses < 0) end--, parentheses++;
    else if (last === ']' && brackets < 0) end--, brackets++;
    else if (last === '}' && braces < 0) end--, braces++;
    else return end;
  }
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const CODE_LENGTH = 8;

function newCode(): string {
  const bytes = randomBytes(CODE_LENGTH);
  let code = '';
  for (const b of bytes) code += ALPHABET[b % ALPHABET.length];
  return code;
}

/** A URL found in a text, and where: `text.slice(start, end)` is the URL. */
export interface UrlMatch {
  url: string;
  start: number;
  end: number;
}

/** Every http(s) URL in a text and where it is, without the punctuation that usually follows one in a sentence. */
export function findUrlMatches(text: string): UrlMatch[] {
  const urls: UrlMatch[] = [];
  for (const m of text.matchAll(URL_IN_TEXT)) {
    const end = urlLength(text, m.index, m[0]);
    if (end > m[0].indexOf('//') + 2) urls.push({ url: m[0].slice(0, end), start: m.index, end: m.index + end });
  }
  return urls;
}

/** Every http(s) URL in a text, without the punctuation that usually follows one in a sentence. */
export function findUrls(text: string): string[] {
  return findUrlMatches(text).map((m) => m.url);
}

/** Characters as the limits count them: code points. */
const characters = (text: string): number => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

/**
 * SMS Gateway v2's link shortening: each URL in a message becomes
 * `<base>/<code>`, stored with the message before it is accepted; the gateway
 * redirects the short link and every click is recorded in history. A message
 * whose short links would cost it an SMS part more (or pass 1,600 characters)
 * keeps its links as written, all of them.
 */
export function createLinkShortener(deps: { links: LinkStore; baseUrl: string }) {
  const cache = new FifoMap<string, ShortLinkRecord>();
  const MAX_CACHED = 100_000;
  const remember = (link: ShortLinkRecord): void => {
    cache.set(link.code, link);
    if (cache.size > MAX_CACHED) cache.shift();
  };
  const clicks = createVoidBatcher<LinkClick>(
    async (batch) => {
      await deps.links.recordLinkClicks(batch);
    },
    { maxItems: 5000, maxDelayMs: 100, maxConcurrent: 1 },
  );
  const base = deps.baseUrl.replace(/\/+$/, '');

  return {
    /** Rewrites the content of these messages in place; resolves once the links are stored. */
    async shorten(records: MessageRecord[]): Promise<void> {
      const links: ShortLinkRecord[] = [];
      for (const r of records) {
        const found = findUrlMatches(r.content);
        if (found.length === 0) continue;
        // Each URL is replaced where it was found, not wherever its text appears: a URL that begins another one
        // (https://a.com/x and https://a.com/x/y), or whose text is inside another, kept the longer one whole.
        const byUrl = new Map<string, ShortLinkRecord>();
        let content = '';
        let at = 0;
        for (const { url, start, end } of found) {
          let link = byUrl.get(url);
          if (!link) {
            link = { code: newCode(), url, messageId: r.id, applicationId: r.applicationId, createdAt: r.acceptedAt };
            byUrl.set(url, link);
          }
          content += `${r.content.slice(at, start)}${base}/${link.code}`;
          at = end;
        }
        content += r.content.slice(at);
        // Short links longer than the links they replace (http://a.co) must not cost the sender a part more, nor take
        // the message past the 1,600 characters it was accepted within: such a message keeps its links as written.
        if (countSegments(content) > countSegments(r.content) || characters(content) > MAX_SMS_CHARACTERS) continue;
        r.content = content;
        links.push(...byUrl.values());
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
