/** Half of a surrogate pair without its other half: with the u flag, a whole pair is one code point and never matches. */
const LONE_SURROGATE = /\p{Cs}/gu;

/**
 * Text as a USVString, as WHATWG's conversion makes one: each lone surrogate
 * (a JSON `"\ud83d"` without its partner) becomes U+FFFD, whole characters
 * stay as they are. What a carrier sends us is kept and passed on whole, not
 * left to whichever encoder meets it next to replace or refuse.
 * (String#toWellFormed does this, but is past this project's ES2023 lib.)
 */
export function toUsvString(text: string): string {
  return text.replace(LONE_SURROGATE, '\ufffd');
}
