/**
 * Text a person typed, such as an application's name or password, compared
 * as the same text whichever way the keyboard wrote its letters: ō may come
 * precomposed (NFC, as Windows and most phones type it) or as o and a
 * combining macron (NFD, as macOS may), and RFC 8265 compares the two as one.
 */
export const sameTypedText = (a: string, b: string): boolean => a === b || a.normalize('NFC') === b.normalize('NFC');

/**
 * The forms to look a typed text up in, the text as given first: what is kept
 * now is NFC, and what was kept before was the text as typed, in either form.
 */
export function typedForms(text: string): string[] {
  return [...new Set([text, text.normalize('NFC'), text.normalize('NFD')])];
}
