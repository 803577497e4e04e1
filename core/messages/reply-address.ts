import { INTERNATIONAL } from '../domain/handset-key';

/**
 * The form in which an address a message was sent from, and the address a
 * reply was sent to, are compared. A handset replying to `+6421000000` may
 * reach us as `6421000000` (the plus travels as the type of number) and a
 * short code may come back with spaces or dashes an operator typed; letters
 * of an alphanumeric sender are compared without regard to case.
 */
export function replyAddressKey(address: string): string {
  const trimmed = address.normalize('NFC').trim();
  if (/^\+?[\d\s\-().]+$/.test(trimmed) && /\d/.test(trimmed)) {
    const digits = trimmed.replace(/\D/g, '');
    // 00 then a country code (none starts with 0) is the international number, as handset keys take it:
    // `006421555000` is `+6421555000`, or a claim could be passed by writing a number that way.
    return INTERNATIONAL.test(digits) ? digits.slice(2) : digits;
  }
  // Upper-casing can leave decomposed letters (Greek with diacritics): compose again.
  return trimmed.toUpperCase().normalize('NFC');
}
