/**
 * Operator block lists: E.164 numbers or number prefixes (`+6421`, `+64211234567`).
 * A destination is blocked when any listed prefix — of its application's list
 * or of the global one — starts it; the decision names the longest such
 * prefix, so an operator sees the most specific entry that stopped a message.
 * There are no exceptions (no allow entries), so the order entries were added
 * in never matters. Destinations that are not phone numbers (e-mail, WhatsApp
 * ids that are not numbers) are never blocked by these lists.
 */

import { handsetKey } from './handset-key';

const ENTRY = /^\+?[0-9]{1,15}$/;
const STORED = /^\+[0-9]{1,15}$/;

/**
 * An operator's entry in its stored form (`+` and digits), or undefined when
 * it is not a number or prefix. Written as handset-key.ts reads numbers, so
 * `0064…` is `+64…` in entries and destinations alike.
 */
export function normalizeBlockPrefix(text: string): string | undefined {
  const compact = text.replace(/[\s().-]/g, '');
  if (!ENTRY.test(compact)) return undefined;
  const stored = handsetKey(compact);
  return STORED.test(stored) ? stored : undefined;
}

/** The destination as block entries are written (`+` and digits), or undefined when it is not a phone number. */
export function blockableNumber(destination: string): string | undefined {
  return normalizeBlockPrefix(destination);
}

/** Every prefix a block entry could be for this number, shortest first (`+6`, `+64`, …, the whole number). */
export function candidatePrefixes(number: string): string[] {
  const out: string[] = [];
  for (let end = 2; end <= number.length; end++) out.push(number.slice(0, end));
  return out;
}

/** The longest listed prefix of the destination, or undefined: it may be sent. */
export function matchBlock(destination: string, isListed: (prefix: string) => boolean): string | undefined {
  const number = blockableNumber(destination);
  if (number === undefined) return undefined;
  const candidates = candidatePrefixes(number);
  for (let i = candidates.length - 1; i >= 0; i--) if (isListed(candidates[i]!)) return candidates[i];
  return undefined;
}
