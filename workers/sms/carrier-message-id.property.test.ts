import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IdBase } from '../../lib/carriers-file';
import { canonicalCarrierId, receiptIdAsSubmitId } from './carrier-message-id';

/** A number as a carrier may write it: in a base, in either case, padded with zeros to a width. */
const written = (n: bigint, base: IdBase, upper: boolean, width: number): string => {
  const digits = n.toString(base === 'hex' ? 16 : 10);
  return (upper ? digits.toUpperCase() : digits).padStart(width, '0');
};
const style = fc.record({ base: fc.constantFrom<IdBase>('hex', 'decimal'), upper: fc.boolean(), width: fc.nat(20) });

describe('carrier message ids', () => {
  it('match a receipt to its submit whatever case, zero padding and base each was written in', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n }), style, style, (n, submit, receipt) => {
        const kept = canonicalCarrierId(written(n, submit.base, submit.upper, submit.width), submit.base);
        expect(receiptIdAsSubmitId(written(n, receipt.base, receipt.upper, receipt.width), receipt.base, submit.base)).toBe(kept);
      }),
    );
  });

  it('keep an id that is no number in its base exactly as written, so opaque ids match only themselves', () => {
    for (const id of ['msg-00AB', 'Ab3fZ', '0x1f', ' 12', '']) {
      expect(canonicalCarrierId(id, 'hex')).toBe(id);
      expect(receiptIdAsSubmitId(id, 'hex', 'hex')).toBe(id);
    }
    expect(receiptIdAsSubmitId('not-a-number', 'decimal', 'hex')).toBe('not-a-number');
    expect(canonicalCarrierId('f426b', 'hex')).toBe('f426b');
    expect(canonicalCarrierId('000F426B', 'hex')).toBe('f426b');
    expect(canonicalCarrierId('0001000318', 'decimal')).toBe('1000318');
    expect(canonicalCarrierId('0', 'decimal')).toBe('0');
  });
});
