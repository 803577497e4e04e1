import { HermodError } from '../../lib/errors';

/** What an SMSC can carry as a sender: printable ASCII (SMPP source_addr is a C-octet string, alphanumeric senders are GSM letters). */
const CARRIABLE = /^[\x20-\x7e]*$/;
/** A number: digits, after a plus when international. The SMPP writer sends anything else as an alphanumeric sender. */
const NUMBER = /^\+?\d+$/;
const LETTER = /[A-Za-z]/;
/** GSM 03.40 carries an alphanumeric originating address of at most 11 characters. */
const MAX_ALPHANUMERIC = 11;
/** A number as people write it, with spaces, dashes, dots or brackets (`+64 21-555 000`, `(09) 555`). */
const WRITTEN_NUMBER = /^\+?[\d\s\-().]*\d[\d\s\-().]*$/;
/** The longest address an application may claim (core's limit before claims had to be senders). */
const MAX_CLAIMED = 30;

/** Why no SMSC could send from an address, or undefined when one could: one rule for sends and for claims. */
type Fault = { kind: 'blank' } | { kind: 'not-carriable'; character: string } | { kind: 'no-letter' } | { kind: 'too-long'; length: number };

function senderFault(value: string): Fault | undefined {
  if (NUMBER.test(value)) return undefined;
  // Spaces are printable, but a sender of nothing but spaces is no sender a handset can show or answer.
  if (value.trim() === '') return { kind: 'blank' };
  if (!CARRIABLE.test(value)) return { kind: 'not-carriable', character: [...value].find((c) => !CARRIABLE.test(c))! };
  if (!LETTER.test(value)) return { kind: 'no-letter' };
  if (value.length > MAX_ALPHANUMERIC) return { kind: 'too-long', length: value.length };
  return undefined;
}

/**
 * Refuses a sender (`source`, `mask`) that no SMSC could send from, at the
 * edge, instead of accepting the message and having the carrier reject it:
 * a blank one, characters outside printable ASCII, an alphanumeric sender longer than 11
 * characters, and a number written with spaces or separators (which would
 * go out as an alphanumeric sender of digits).
 */
export function checkSenderAddress(value: string | undefined, field: string): void {
  const fault = value === undefined ? undefined : senderFault(value);
  if (!fault) return;
  const description = sendDescription(fault);
  throw new HermodError('invalid_attrib', `${field} ${description}`, { fields: [{ field, description }] });
}

function sendDescription(fault: Fault): string {
  switch (fault.kind) {
    case 'blank':
      return 'is blank; give a sender or leave the field out';
    case 'not-carriable':
      return `must be letters, digits and punctuation an SMSC can send from; ${JSON.stringify(fault.character)} cannot be`;
    case 'no-letter':
      return 'must be a number of digits only (a leading + for an international one, no spaces or separators) or an alphanumeric sender';
    case 'too-long':
      return `as an alphanumeric sender must be at most ${MAX_ALPHANUMERIC} characters, not ${fault.length}`;
  }
}

/**
 * What is wrong with an address an application would claim (`hermod apps
 * set-sources`), as one line naming it and how to write it, or undefined.
 * A claim is on an address the application sends from, so it is one a send
 * could use as its `source` or `mask`: `+64 21-555 000` claimed as written
 * (or as three addresses, when the shell split it) took addresses no send
 * can have, or others' short codes, and refused those applications' sends.
 */
export function claimedAddressProblem(address: string): string | undefined {
  const fault = senderFault(address);
  const named = `source address ${JSON.stringify(address)}`;
  if (!fault) return address.length > MAX_CLAIMED ? `${named} is too long: a number is at most ${MAX_CLAIMED} digits` : undefined;
  if (fault.kind !== 'blank' && WRITTEN_NUMBER.test(address)) {
    return `${named} cannot be sent from: write a number without spaces or dashes: ${asNumber(address)}`;
  }
  switch (fault.kind) {
    case 'blank':
      return `${named} cannot be sent from: it is blank`;
    case 'not-carriable':
      return `${named} cannot be sent from: an SMSC carries letters, digits and punctuation of ASCII, not ${JSON.stringify(fault.character)}`;
    case 'no-letter':
      return `${named} cannot be sent from: write a number of digits (a leading + for an international one) or an alphanumeric sender with a letter`;
    case 'too-long':
      return `${named} cannot be sent from: an alphanumeric sender is at most ${MAX_ALPHANUMERIC} characters, not ${fault.length}`;
  }
}

/** Whether an address is a number as people write it, separators and all: the shell may have split one into several. */
export function isWrittenNumber(address: string): boolean {
  return WRITTEN_NUMBER.test(address);
}

/** A number as people write it, as a send takes it: its digits, after its plus. */
export function asNumber(written: string): string {
  return `${written.trim().startsWith('+') ? '+' : ''}${written.replace(/\D/g, '')}`;
}

/** Refuses a claim on an address no send could use (claimedAddressProblem), for every client of core. */
export function checkClaimedAddress(address: string): void {
  const problem = claimedAddressProblem(address);
  if (problem) throw new HermodError('invalid_attrib', problem, { fields: [{ field: 'source_addresses', description: problem }] });
}
