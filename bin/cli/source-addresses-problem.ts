import { asNumber, claimedAddressProblem, isWrittenNumber } from '../../core/domain/sender-address';

/**
 * What is wrong with the addresses given to `apps set-sources`, as the line
 * core refuses the first bad one with, or undefined. Checked before core is
 * asked, so the line is refused as a usage problem and nothing is claimed.
 * Where every address is a piece of a number (`+64 21-555 000` unquoted:
 * the shell made three addresses of it), the number they make is named too.
 */
export function sourceAddressesProblem(addresses: readonly string[]): string | undefined {
  for (const address of addresses) {
    const problem = claimedAddressProblem(address);
    if (!problem) continue;
    if (addresses.length > 1 && addresses.every(isWrittenNumber)) {
      const line = addresses.join(' ');
      return `${problem} (if ${JSON.stringify(line)} is one number: ${asNumber(line)})`;
    }
    return problem;
  }
  return undefined;
}
