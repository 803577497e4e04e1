/** RFC 5322's recommended line length; the subject is a courtesy, so longer text is cut to it. */
const MAX_SUBJECT = 78;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The subject of an e-mail attempt (and an MMS): the template's name, or the
 * first line of the text (ended by LF, CR LF or CR), or for a media message
 * without text the name of the file its link names, cut to at most 78
 * user-perceived characters. Cut by grapheme, not UTF-16 unit: a cut inside
 * 👋🏽 would leave a lone surrogate, which the mail encoder turns into U+FFFD.
 */
export function mailSubject(templateName: string | undefined, text: string, mediaUrl?: string): string {
  const line = templateName ?? (text === '' && mediaUrl ? fileNameOf(mediaUrl) : text.split(/\r\n|\r|\n/)[0]!.trimEnd());
  let subject = '';
  let n = 0;
  for (const { segment } of graphemes.segment(line)) {
    if (++n > MAX_SUBJECT) break;
    subject += segment;
  }
  return subject || 'Message';
}

/** The last segment of a link's path, decoded where it can be (`ng%C4%81.png` → `ngā.png`); '' for none. */
function fileNameOf(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return '';
  }
  const last = path.slice(path.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}
