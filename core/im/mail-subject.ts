/** RFC 5322's recommended line length; the subject is a courtesy, so longer text is cut to it. */
const MAX_SUBJECT = 78;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The subject of an e-mail attempt (and an MMS): the template's name, or the
 * first line of the text (ended by LF, CR LF or CR), or for a media message
 * without text the name of the file its link names, cut to at most 78
 * user-perceived characters and not ending in the spaces it was cut after.
 * Cut by grapheme, not UTF-16 unit: a cut inside 👋🏽 would leave a lone
 * surrogate, which the mail encoder turns into U+FFFD.
 */
export function mailSubject(templateName: string | undefined, text: string, mediaUrl?: string): string {
  const line = templateName ?? (text === '' && mediaUrl ? fileNameOf(mediaUrl) : text.split(/\r\n|\r|\n/)[0]!.trimEnd());
  let subject = '';
  let n = 0;
  for (const { segment } of graphemes.segment(line)) {
    if (++n > MAX_SUBJECT) {
      // Cut after a space, it would end the subject: a mail client shows `…past seventy ` as a subject cut mid-thought.
      subject = subject.trimEnd();
      break;
    }
    subject += segment;
  }
  return subject || 'Message';
}

/** C0 and C1 control characters and DEL: a CR LF in a subject would start another header at the provider. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The last segment of a link's path, decoded where it can be (`ng%C4%81.png` → `ngā.png`), and kept encoded where
 * decoding gives a control character (`a%0D%0ABcc:…` stays so); '' for none.
 */
function fileNameOf(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return '';
  }
  const last = path.slice(path.lastIndexOf('/') + 1);
  try {
    const decoded = decodeURIComponent(last);
    return CONTROL.test(decoded) ? last : decoded;
  } catch {
    return last;
  }
}
