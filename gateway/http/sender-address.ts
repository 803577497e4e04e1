import { HermodError } from '../../lib/errors';

/** What an SMSC can carry as a sender: printable ASCII (SMPP source_addr is a C-octet string, alphanumeric senders are GSM letters). */
const CARRIABLE = /^[\x20-\x7e]*$/;
/** A number: digits, after a plus when international. The SMPP writer sends anything else as an alphanumeric sender. */
const NUMBER = /^\+?\d+$/;
const LETTER = /[A-Za-z]/;
/** GSM 03.40 carries an alphanumeric originating address of at most 11 characters. */
const MAX_ALPHANUMERIC = 11;

/**
 * Refuses a sender (`source`, `mask`) that no SMSC could send from, at the
 * edge, instead of accepting the message and having the carrier reject it:
 * a blank one, characters outside printable ASCII, an alphanumeric sender longer than 11
 * characters, and a number written with spaces or separators (which would
 * go out as an alphanumeric sender of digits).
 */
export function checkSenderAddress(value: string | undefined, field: string): void {
  if (value === undefined || NUMBER.test(value)) return;
  let description: string | undefined;
  if (value.trim() === '') {
    // Spaces are printable, but a sender of nothing but spaces is no sender a handset can show or answer.
    description = 'is blank; give a sender or leave the field out';
  } else if (!CARRIABLE.test(value)) {
    const offending = [...value].find((c) => !CARRIABLE.test(c))!;
    description = `must be letters, digits and punctuation an SMSC can send from; ${JSON.stringify(offending)} cannot be`;
  } else if (!LETTER.test(value)) {
    description = 'must be a number of digits only (a leading + for an international one, no spaces or separators) or an alphanumeric sender';
  } else if (value.length > MAX_ALPHANUMERIC) {
    description = `as an alphanumeric sender must be at most ${MAX_ALPHANUMERIC} characters, not ${value.length}`;
  }
  if (description) throw new HermodError('invalid_attrib', `${field} ${description}`, { fields: [{ field, description }] });
}
