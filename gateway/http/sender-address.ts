import { HermodError } from '../../lib/errors';

/** What an SMSC can carry as a sender: printable ASCII (SMPP source_addr is a C-octet string, alphanumeric senders are GSM letters). */
const CARRIABLE = /^[\x20-\x7e]*$/;

/**
 * Refuses a sender (`source`, `mask`) that no SMSC could send from, at the
 * edge, instead of accepting the message and having the carrier reject it.
 */
export function checkSenderAddress(value: string | undefined, field: string): void {
  if (value === undefined || CARRIABLE.test(value)) return;
  const offending = [...value].find((c) => !CARRIABLE.test(c))!;
  const description = `must be letters, digits and punctuation an SMSC can send from; ${JSON.stringify(offending)} cannot be`;
  throw new HermodError('invalid_attrib', `${field} ${description}`, { fields: [{ field, description }] });
}
