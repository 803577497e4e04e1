import { HermodError } from '../../lib/errors';
import { nanpAreaCodeProblem } from './nanp-area-code';
import { trunkPrefixProblem } from './trunk-prefix';

/**
 * Why a destination cannot be sent as written, or undefined: a national trunk
 * prefix after its country code (`has the trunk prefix 0 after …`), or a North
 * American area code starting with 0 or 1. `+6421…` and `006421…` are
 * international; so are bare digits where the interface takes the country
 * code first without a plus (v1, v2), but not in a Campaign Manager member,
 * where they are a national number or short code.
 */
export function destinationProblem(destination: string, bareDigits: 'international' | 'national' = 'international'): string | undefined {
  const digits = destination.startsWith('+')
    ? destination.slice(1)
    : destination.startsWith('00')
      ? destination.slice(2)
      : bareDigits === 'international'
        ? destination
        : undefined;
  if (digits === undefined || !/^\d+$/.test(digits)) return undefined;
  // A trunk prefix first: `+1 1 212 …` is the 1 dialled before a whole number, and its refusal names the number meant.
  return trunkPrefixProblem(digits) ?? nanpAreaCodeProblem(digits);
}

/** Refuses (400, in `field`) a destination that cannot be sent as written, instead of sending to another handset or none. */
export function checkDestination(destination: string, field: string, bareDigits: 'international' | 'national' = 'international'): void {
  const description = destinationProblem(destination, bareDigits);
  if (description !== undefined) throw new HermodError('invalid_attrib', `${field} ${description}`, { fields: [{ field, description }] });
}
