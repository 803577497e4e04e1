import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blockableNumber, matchBlock, normalizeBlockPrefix } from './block-prefix';

const digits = (min: number, max: number) => fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((d) => d.join(''));
/** Prefixes drawn mostly from a few nested country and network codes, so lists and destinations often meet. */
const COMMON = ['+6', '+64', '+6421', '+642112', '+81', '+8190', '+86', '+1'];
const prefix = fc.oneof(
  fc.constantFrom(...COMMON),
  digits(1, 6).map((d) => `+${d}`),
);
const number = fc.oneof(
  digits(4, 15).map((d) => `+${d}`),
  fc.tuple(fc.constantFrom(...COMMON), digits(3, 8)).map(([p, d]) => `${p}${d}`),
);
/** Destinations as they arrive: E.164, with spaces or dashes, without `+`, or no phone number at all. */
const destination = fc.oneof(
  { weight: 6, arbitrary: number },
  { weight: 1, arbitrary: number.map((n) => `${n.slice(0, 4)} ${n.slice(4, 7)}-${n.slice(7)}`) },
  { weight: 1, arbitrary: number.map((n) => n.slice(1)) },
  { weight: 1, arbitrary: fc.constantFrom('tēnā.koe@example.nz', '田中@例え.jp', '👋🏽', '', 'whatsapp:Aroha') },
);

describe('block-list prefix matching (property)', () => {
  it('gives every destination exactly one decision: the longest listed prefix of its number, or none when nothing listed starts it', () => {
    fc.assert(
      fc.property(fc.uniqueArray(prefix, { maxLength: 12 }), destination, (listed, dest) => {
        const set = new Set(listed);
        const decision = matchBlock(dest, (p) => set.has(p));
        const n = blockableNumber(dest);
        const starting = n === undefined ? [] : listed.filter((p) => n.startsWith(p));
        if (starting.length === 0) {
          expect(decision).toBeUndefined();
        } else {
          expect(decision).toBe(starting.reduce((a, b) => (b.length > a.length ? b : a)));
        }
      }),
    );
  });

  it('does not depend on the order entries were listed in, and blocks whatever a shorter listed prefix blocks', () => {
    fc.assert(
      fc.property(fc.uniqueArray(prefix, { maxLength: 12 }), number, fc.integer({ min: 2, max: 16 }), (listed, dest, cut) => {
        const forward = matchBlock(dest, (p) => listed.includes(p));
        const reversed = matchBlock(dest, (p) => [...listed].reverse().includes(p));
        expect(reversed).toBe(forward);
        // A prefix of the number as entries and destinations are both read (`+005…` is `+5…`: 00 is the international prefix).
        const number = blockableNumber(dest)!;
        const shorter = number.slice(0, Math.min(cut, number.length));
        expect(matchBlock(dest, (p) => p === shorter || listed.includes(p))).not.toBeUndefined();
      }),
    );
  });

  it('stores entries as + and digits and refuses what is not a number or prefix', () => {
    expect(normalizeBlockPrefix('+64 21-123')).toBe('+6421123');
    expect(normalizeBlockPrefix('6421')).toBe('+6421');
    for (const bad of ['', '+', '+64a', 'kia ora', '+1234567890123456', '++64']) expect(normalizeBlockPrefix(bad)).toBeUndefined();
  });

  it('reads the international prefix 00 in a destination and an entry as the plus, as opt-outs do', () => {
    expect(matchBlock('006421123456', (p) => p === '+6421')).toBe('+6421');
    expect(matchBlock('00 64 21 123 456', (p) => p === '+6421')).toBe('+6421');
    expect(normalizeBlockPrefix('0064 21')).toBe('+6421');
    expect(matchBlock('+6421123456', (p) => p === normalizeBlockPrefix('006421'))).toBe('+6421');
    // A national number stays national.
    expect(matchBlock('021123456', (p) => p === '+6421')).toBeUndefined();
  });
});
