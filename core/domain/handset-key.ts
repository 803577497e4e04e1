/**
 * How a handset is compared wherever hot state keys something by it (opt-outs,
 * the last message to it, what a reply from it is routed by). A number comes
 * written many ways: an API client writes `6421999001` or `+64 21 999 001`,
 * and a carrier hands a reply's sender over with or without its plus (the plus
 * travels as the type of number). Phone numbers are kept as `+` and digits, as
 * block lists keep them; any other address (an e-mail address, a WhatsApp id
 * that is not a number) is kept as it is. A contact list's `0064 21 999 001`
 * is `+6421999001`: 00 is the international prefix of most of the world, and
 * no country code starts with 0. A national number (`021 999 001`) stays
 * distinct from its international form: no country is known here.
 */
export function handsetKey(handset: string): string {
  if (E164.test(handset)) return handset; // as the interfaces mostly write it: once a message
  const compact = handset.trim().replace(/[\s().-]/g, '');
  if (INTERNATIONAL.test(compact)) return `+${compact.slice(compact.indexOf('00') + 2)}`;
  if (!NUMBER.test(compact)) return handset;
  return compact.startsWith('+') ? compact : `+${compact}`;
}

const NUMBER = /^\+?[0-9]{1,15}$/;
/** 00, then a number of up to 15 digits whose country code, like every one, does not start with 0. */
export const INTERNATIONAL = /^\+?00[1-9][0-9]{0,14}$/;
const E164 = /^\+[1-9][0-9]{0,14}$/;
