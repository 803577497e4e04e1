import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReportChunk } from './gen/hermod/v1/campaigns';
import { deserializeReportChunk, serializeReportChunk } from './report-chunk-wire';

const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 200 }).map((s) => Buffer.from(s)),
  fc.constantFrom('{"mobile":"Kia ora, e hoa mā 👋🏽 测试"}', '').map((s) => Buffer.from(s)),
  fc.integer({ min: 0, max: 300_000 }).map((n) => Buffer.alloc(n, 'ā')),
);

describe('report chunk wire form (property)', () => {
  it('is written byte for byte as the generated encoder writes it, at every length', () => {
    fc.assert(
      fc.property(text, (jsonRows) => {
        expect(serializeReportChunk({ jsonRows }).equals(Buffer.from(ReportChunk.encode({ jsonRows }).finish()))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('is read back to the same text, and a message with other fields still reads as the generated decoder reads it', () => {
    fc.assert(
      fc.property(text, fc.uint8Array({ maxLength: 8 }), (jsonRows, extra) => {
        expect(deserializeReportChunk(serializeReportChunk({ jsonRows })).jsonRows.equals(jsonRows)).toBe(true);
        // An unknown field 4 after the text (a later version's): not the fast path.
        const later = Buffer.concat([serializeReportChunk({ jsonRows }), Buffer.from([0x22, extra.length]), extra]);
        expect(deserializeReportChunk(later).jsonRows.equals(ReportChunk.decode(later).jsonRows)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
