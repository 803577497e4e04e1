import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { leaseMetadata, parseLease } from './kafka-bus-subscription';

describe('hand-out counts in Kafka commit metadata', () => {
  it('reads back every count it wrote', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(parseLease(leaseMetadata(n))).toBe(n);
      }),
    );
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
