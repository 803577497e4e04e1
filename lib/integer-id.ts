/**
 * An integer id as Gateway v1 and Campaign Manager clients write one: a
 * positive integer in plain digits (no sign, no leading zero, no exponent) at
 * most 2^53 - 1, so JavaScript clients read it exactly. Undefined otherwise.
 */
export function parseIntegerId(text: string | undefined): number | undefined {
  if (text === undefined || !/^[1-9][0-9]{0,15}$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}
