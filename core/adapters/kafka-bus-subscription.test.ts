import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { leaseMetadata, parseLease, parseLeaseUpto } from './kafka-bus-subscription';

describe('hand-out counts in Kafka commit metadata', () => {
  it('reads back every count it wrote', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(parseLease(leaseMetadata(n))).toBe(n);
      }),
    );
  });

  it('reads back every count and every offset up to which later batches were handed out', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }), (n, upto) => {
        expect(parseLease(leaseMetadata(n, String(upto)))).toBe(n);
        expect(parseLeaseUpto(leaseMetadata(n, String(upto)))).toBe(String(upto));
      }),
    );
    expect(parseLeaseUpto(leaseMetadata(3))).toBeUndefined();
    for (const metadata of ['hermod:handed=0;upto=9', 'hermod:handed=2;upto=', 'hermod:handed=2;upto=-1', 'hermod:handed=2;upto=9;x', 'Kia ora;upto=5']) {
      expect(parseLeaseUpto(metadata), metadata).toBeUndefined();
    }
  });

  it('counts no hand-out for metadata another client wrote, whatever it holds', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constant(null), fc.constant(undefined)), (metadata) => {
        const n = parseLease(metadata);
        expect(Number.isSafeInteger(n) && n >= 0).toBe(true);
        if (!metadata?.startsWith('hermod:handed=')) expect(n).toBe(0);
      }),
    );
    for (const metadata of ['hermod:handed=-3', 'hermod:handed=1.5', 'hermod:handed=', 'hermod:handed=9'.repeat(40), 'Kia ora, e hoa mā', '你好世界 👋🏽🎉']) {
      expect(parseLease(metadata)).toBe(0);
    }
  });
});
