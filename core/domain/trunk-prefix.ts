/**
 * Country codes whose numbering plan has the national trunk prefix 0 and no
 * number that starts with 0 but the `00…` freephone ranges of a few (Japan,
 * Korea, Thailand, Uruguay…): from libphonenumber's PhoneNumberMetadata.xml
 * (2026-07), every territory with nationalPrefix 0 (Hungary's 06). Italy, San
 * Marino, the Vatican, Côte d'Ivoire, Congo, Gabon and Benin have no trunk
 * prefix: their numbers' leading 0 is dialled from abroad too.
 */
const TRUNK_ZERO = new Set(
  (
    '20 27 31 32 33 36 40 41 43 44 46 49 51 53 54 55 57 58 60 61 62 63 64 66 81 82 84 86 90 91 92 93 94 95 98 ' +
    '211 212 213 218 231 232 233 234 243 249 250 251 252 254 255 256 260 261 262 263 264 265 291 353 355 358 359 ' +
    '370 373 374 377 380 381 382 383 385 386 387 389 421 423 508 590 591 593 594 595 596 598 686 850 855 856 880 ' +
    '886 961 962 963 964 966 967 970 971 972 976 977 994 995 996'
  ).split(' '),
);

/**
 * A trunk prefix written after a country code: the national digits it shows in, its first group being the
 * prefix as written. Without `sure`, the number meant is the national digits without that group; with
 * `sure: false` no one number can be named (`advice` says how to write it).
 */
interface TrunkRule {
  written: RegExp;
  /** How the refusal names what it found, when not `the trunk prefix <prefix>`. */
  name?: (prefix: string) => string;
  sure?: false;
  advice?: string;
}

const ZERO: TrunkRule[] = [{ written: /^(0)[1-9]/d }];
const AR_MOBILE = 'for a mobile +54 9, the area code without 0 and the number without the 15 after the area code';
/** Plans whose trunk prefix is not a lone 0, or one of whose numbers starts as the prefix does. */
const OTHER_PLANS: Record<string, TrunkRule[]> = {
  // North America (and the Marshall Islands) dial 1 before the area code, which never starts with 1. In North America it
  // goes before 10 digits: +1 123 456 7890 is no number with it, but an area code starting with 1 (nanp-area-code.ts).
  '1': [{ written: /^(1)[2-9]\d{9}$/d }],
  // The Marshall Islands' numbers have 7 digits, from 2 to 6 (libphonenumber): none starts with its 1.
  '692': [{ written: /^(1)[2-6]\d{6}$/d }, { written: /^(1)/d, sure: false, advice: '+692 and the 7 digits of the number' }],
  // Russia and Kazakhstan: 8, but +7 812 (St Petersburg) and +7 800 are numbers: 10 digits, 11 with the 8.
  '7': [{ written: /^(8)\d{10}$/d }],
  // Turkmenistan dials 8 before its 8-digit numbers; Belarus 8 and its area codes' 0 (8 017 … is +375 17 …), and +375 800 … is a number.
  '993': [{ written: /^(8)\d{8}$/d }],
  '375': [
    { written: /^(80)[1-9]\d{8}$/d },
    { written: /^(0)[1-9]\d{8}$/d },
    { written: /^(0)[1-9]/d, sure: false, advice: '+375 and the 9 digits of the number' },
  ],
  // Hungary dials 06 (06 1 … is +36 1 …).
  '36': [{ written: /^(06)[1-9]/d }, { written: /^(0)[1-9]/d }],
  // Rwanda's 06 numbers have 8 digits; its trunk 0 before a 9-digit number makes 10.
  '250': [{ written: /^(0)\d{9}$/d }],
  // Mexico's numbers have 10 digits and none starts with 0: 01 went before a long-distance number, 044 and 045
  // before a mobile (dropped in 2019, still on cards). +52 1 … before a mobile is left: WhatsApp ids keep it.
  '52': [
    { written: /^(01)[1-9]\d{9}$/d },
    { written: /^(04[45])[1-9]\d{9}$/d },
    { written: /^(0)/d, sure: false, advice: '+52 and the 10 digits of the number' },
  ],
  // Argentina: 0 before an area code (starting 1, 2 or 3) and a number of 10 digits together; a mobile written at home has 15
  // after the area code (011 15 1234 5678), and from abroad is +54 9, the area code and the number without
  // the 15. Where the area code ends (2 to 4 digits) is not told by the digits alone.
  '54': [
    { written: /^(0)[1-3]\d{9}$/d },
    { written: /^9(0)[1-3]\d{9}$/d },
    { written: /^9?(0)/d, sure: false, advice: AR_MOBILE },
    // No Argentine number has 12 digits (13 after the 9): one that does holds the 15 dialled at home before a mobile.
    { written: /^9?(?=\d{12}$)\d{2,4}?(15)/d, sure: false, name: () => 'the 15 of a mobile dialled at home', advice: AR_MOBILE },
  ],
  // Lithuania dials 8 (and 0) before its 8-digit numbers; +370 800 … is a number.
  '370': [
    { written: /^(8)[1-9]\d{7}$/d },
    { written: /^(0)[1-9]\d{7}$/d },
    { written: /^(0)[1-9]/d, sure: false, advice: '+370 and the 8 digits of the number' },
  ],
  // Brazil: 0 before the area code, or 0 and a long-distance carrier's two digits (0 21 11 …); its numbers
  // have 10 or 11 digits.
  '55': [{ written: /^(0\d\d)[1-9]\d{9,10}$/d, name: (p) => `the trunk prefix 0 and the carrier code ${p.slice(1)}` }, { written: /^(0)[1-9]/d }],
};

/** A national trunk prefix found after a country code, and the number written without it. */
export interface TrunkPrefix {
  countryCode: string;
  trunk: string;
  /** The number as dialled from abroad: + and the country code, without the trunk prefix; undefined where the digits do not tell it. */
  international?: string;
  /** What the refusal calls it (`the trunk prefix 0`). */
  name: string;
  /** How to write the number where it is not named. */
  advice?: string;
}

/**
 * The national trunk prefix written after the country code of an
 * international number (`digits`: country code first, no `+` or `00`), as
 * numbers are copied from business cards (`+64 021 555 0123`, `+44 (0)20 …`),
 * or undefined. Sent as it is, such a number reaches another handset or none.
 */
export function findTrunkPrefix(digits: string): TrunkPrefix | undefined {
  // Country codes are prefix-free (ITU-T E.164): at most one of these is this number's.
  for (const length of [1, 2, 3]) {
    const countryCode = digits.slice(0, length);
    const rules = OTHER_PLANS[countryCode] ?? (TRUNK_ZERO.has(countryCode) ? ZERO : undefined);
    if (rules === undefined) continue;
    const national = digits.slice(length);
    for (const rule of rules) {
      const match = rule.written.exec(national);
      const [start, end] = match?.indices?.[1] ?? [];
      if (start === undefined || end === undefined) continue;
      const trunk = national.slice(start, end);
      const found: TrunkPrefix = { countryCode, trunk, name: rule.name?.(trunk) ?? `the trunk prefix ${trunk}` };
      if (rule.sure === false) return { ...found, advice: rule.advice };
      return { ...found, international: `+${countryCode}${national.slice(0, start)}${national.slice(end)}` };
    }
    return undefined;
  }
  return undefined;
}

/**
 * Why a number (`digits`: country code first, no `+` or `00`) cannot be sent
 * as written, when it has a national trunk prefix after its country code
 * (`has the trunk prefix 0 after …`), or undefined.
 */
export function trunkPrefixProblem(digits: string): string | undefined {
  const found = findTrunkPrefix(digits);
  if (found === undefined) return undefined;
  const inside = `has ${found.name} after the country code +${found.countryCode}; it is dialled only inside the country`;
  if (found.international !== undefined) return `${inside}, so the number from abroad is ${found.international}`;
  return `${inside}: write the number as dialled from abroad, ${found.advice ?? `+${found.countryCode} and the number without it`}`;
}
