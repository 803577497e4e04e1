/** Replies that opt a handset out of an application, and back in. */
const STOP_WORDS = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'OPTOUT', 'OPT OUT', 'REVOKE']);
const START_WORDS = new Set(['START', 'UNSTOP', 'SUBSCRIBE', 'OPTIN', 'OPT IN', 'YES']);

export function keywordOf(text: string): 'stop' | 'start' | undefined {
  // NFKC: a CJK keyboard in full-width mode sends ＳＴＯＰ, which means STOP all the same.
  const word = text
    .normalize('NFKC')
    .trim()
    .toUpperCase()
    .replace(/[.!]+$/, '')
    // OPT-OUT, OPT_OUT and OPT  OUT are OPT OUT.
    .replace(/[\s_-]+/g, ' ');
  if (STOP_WORDS.has(word)) return 'stop';
  if (START_WORDS.has(word)) return 'start';
  return undefined;
}
