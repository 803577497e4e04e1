import { describe, expect, it } from 'vitest';
import { asksToOptBackIn, keywordOf } from './reply-keywords';

describe('reply keywords', () => {
  it('reads STOP and its usual synonyms, in any case and with trailing punctuation, as an opt-out', () => {
    for (const text of ['STOP', 'stop', ' Stop! ', 'unsubscribe', 'STOPALL', 'cancel', 'END', 'quit', 'opt out']) expect(keywordOf(text)).toBe('stop');
  });

  it('reads a keyword typed in full-width letters, as a CJK keyboard sends it, the same as in ASCII', () => {
    for (const text of ['ＳＴＯＰ', 'ｓｔｏｐ！', ' Ｓｔｏｐ ']) expect(keywordOf(text)).toBe('stop');
    expect(keywordOf('ＳＴＡＲＴ')).toBe('start');
  });

  it('reads OPT-OUT and OPT-IN written with a hyphen, an underscore or several spaces as their spaced forms', () => {
    for (const text of ['Opt-Out', 'OPT_OUT', 'opt   out', 'opt\tout.']) expect(keywordOf(text), text).toBe('stop');
    for (const text of ['opt-in', 'Opt_In!']) expect(keywordOf(text), text).toBe('start');
    expect(keywordOf('opt-outs are annoying')).toBeUndefined();
  });

  it('reads a keyword with an invisible character a keyboard or a paste added (zero-width space, joiner, BOM, word joiner) as the keyword (trial)', () => {
    for (const text of ['STOP\u200b', '\u200bStop', 'ST\u200dOP', '\ufeffSTOP', 'STOP\u2060!', 'OPT\u200b OUT'])
      expect(keywordOf(text), JSON.stringify(text)).toBe('stop');
    expect(keywordOf('START\u200c')).toBe('start');
    // Still a word of its own: an invisible character between two words does not make them one keyword.
    expect(keywordOf('STOP\u200bNOW')).toBeUndefined();
  });

  it('reads START and UNSTOP as opting back in', () => {
    for (const text of ['START', 'unstop', 'Subscribe']) expect(keywordOf(text)).toBe('start');
  });

  it('leaves ordinary replies alone, including ones that merely contain a keyword', () => {
    for (const text of [
      'Please stop by tomorrow',
      'thanks',
      '',
      'STOPPED',
      'Kia ora, e hoa mā — tēnā koe',
      'Привет',
      '你好世界',
      '👋🏽🎉',
      'Tēnā koe, stop by tomorrow',
    ])
      expect(keywordOf(text)).toBeUndefined();
  });

  it('takes every START word but YES, which also answers questions, as asking to be messaged again', () => {
    for (const text of ['START', 'start.', 'ＳＴＡＲＴ', 'Opt-In', 'unstop', 'SUBSCRIBE!']) expect(asksToOptBackIn(text), text).toBe(true);
    for (const text of ['YES', 'yes!', 'Ｙｅｓ', 'STOP', 'Āe', 'start me up']) expect(asksToOptBackIn(text), text).toBe(false);
  });
});
