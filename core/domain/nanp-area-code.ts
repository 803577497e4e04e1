/**
 * Why a number of the North American Numbering Plan (`digits`: country code
 * first, no `+` or `00`) is none, when its area code (NPA) starts with 0 or 1,
 * or undefined. Every NPA is [2-9]XX: no carrier takes `+1 055 …`. The
 * exchange code after it is left alone (the docs' +1 555 000 0001 is sent).
 * The area code is named only where ten digits follow the 1, so that which
 * three it is is known (`+1 1 055 …` has no area code 105).
 */
export function nanpAreaCodeProblem(digits: string): string | undefined {
  // Country codes are prefix-free and 1 is North America's: no other starts with 1.
  if (!/^1[01]/.test(digits)) return undefined;
  const why = 'North American area codes start with 2 to 9, so no carrier would take the number';
  if (digits.length === 11) return `has the area code ${digits.slice(1, 4)} after the country code +1; ${why}`;
  return `has ${digits[1]} right after the country code +1, where the area code begins; ${why}`;
}
