import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { handsetKey } from '../domain/handset-key';
import { createSeenHandsets } from './seen-handsets';

const handset = fc.oneof(
  fc.stringMatching(/^\+?(00)?64[0-9]{7,9}$/),
  fc.stringMatching(/^\+[1-9][0-9]{6,14}$/),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
);

describe('handsets an import has seen', () => {
  it('says new exactly when a Set of handset keys would, in any order, across its growth', () => {
    fc.assert(
      fc.property(fc.array(handset, { maxLength: 3000 }), (handsets) => {
        const seen = createSeenHandsets();
        const reference = new Set<string>();
        for (const h of handsets) {
          const isNew = !reference.has(handsetKey(h));
          reference.add(handsetKey(h));
          expect(seen.add(h), h).toBe(isNew);
        }
        expect(seen.size).toBe(reference.size);
      }),
      { numRuns: 200 },
    );
  });

  it('takes one handset written four ways once', () => {
    const seen = createSeenHandsets();
    expect(['+6425000001', '+6425000001', '6425000001', '006425000001'].map((h) => seen.add(h))).toEqual([true, false, false, false]);
  });

  it('holds a million distinct handsets', () => {
    const seen = createSeenHandsets();
    for (let i = 0; i < 1_000_000; i++) seen.add(`+64210${String(i).padStart(6, '0')}`);
    expect(seen.size).toBe(1_000_000);
    expect(seen.add('+64210000000')).toBe(false);
  });
});
