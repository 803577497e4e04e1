/** RFC 5322's recommended line length; the subject is a courtesy, so longer text is cut to it. */
const MAX_SUBJECT = 78;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The subject of an e-mail attempt: the template's name, or the first line of
 * the text, cut to at most 78 user-perceived characters. Cut by grapheme, not
 * UTF-16 unit: a cut inside 👋🏽 would leave a lone surrogate, which the mail
 * encoder turns into U+FFFD.
 */
export function mailSubject(templateName: string | undefined, text: string): string {
  const line = templateName ?? text.split('\n')[0]!;
  let subject = '';
  let n = 0;
  for (const { segment } of graphemes.segment(line)) {
    if (++n > MAX_SUBJECT) break;
    subject += segment;
  }
  return subject || 'Message';
}
