/** Replies that opt a handset out of an application, and back in. */
const STOP_WORDS = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'OPTOUT', 'OPT OUT', 'REVOKE']);
const START_WORDS = new Set(['START', 'UNSTOP', 'SUBSCRIBE', 'OPTIN', 'OPT IN', 'YES']);

/** The reply as a keyword is compared. */
function wordOf(text: string): string {
  // NFKC: a CJK keyboard in full-width mode sends ＳＴＯＰ, which means STOP all the same. Format characters
  // (zero-width space and joiners, BOM, word joiner, direction marks) show nothing: a keyboard or a paste adds them.
  return (
    text
      .replace(/\p{Cf}/gu, '')
      .normalize('NFKC')
      .trim()
      .toUpperCase()
      .replace(/[.!]+$/, '')
      // OPT-OUT, OPT_OUT and OPT  OUT are OPT OUT.
      .replace(/[\s_-]+/g, ' ')
  );
}

export function keywordOf(text: string): 'stop' | 'start' | undefined {
  const word = wordOf(text);
  if (STOP_WORDS.has(word)) return 'stop';
  if (START_WORDS.has(word)) return 'start';
  return undefined;
}

/**
 * A START that can mean nothing but "message me again": every START word but
 * YES, which is as often the answer to the question the last message asked
 * ("Reply YES to confirm"). Such a reply may go to the application the
 * handset opted out of (start-route.ts); a YES stays where the rules send it.
 */
export function asksToOptBackIn(text: string): boolean {
  const word = wordOf(text);
  return START_WORDS.has(word) && word !== 'YES';
}
