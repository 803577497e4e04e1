import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReportChunk } from '../../proto/gen/hermod/v1/campaigns';
import { reportAsJson } from './answers';

/** What a report row must read as, computed the plain way. */
function expectedRow(r: ReportChunk['rows'][number], offset: number): Record<string, unknown> {
  const zone = `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
  const at = (ms: number): string => new Date(ms + offset * 60_000).toISOString().replace('Z', zone);
  return {
    list_name: r.listName,
    message_id: r.messageId,
    mobile: r.mobile,
    sent_date: r.sentAt > 0 ? at(r.sentAt) : '',
    status: r.status,
    status_date: at(r.statusAt),
    timezone: zone,
  };
}

const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('Kia ora, e hoa mā — tēnā koe', '你好世界', '👋🏽', '+64211234567', '0211234567', '"quoted" \\ back\nslash'),
);
const time = fc.integer({ min: 1, max: 4_102_444_800_000 });
const row = fc.record({
  listName: text,
  messageId: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  mobile: text,
  sentAt: fc.oneof(fc.constant(0), time),
  status: fc.oneof(fc.constantFrom('received', 'submitted', 'failed', 'dead'), text),
  statusAt: time,
});

describe('report answer (property)', () => {
  it('is one JSON array holding every row with its texts as written and its dates in the offset, however the rows come in chunks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(row, { maxLength: 6 }), { maxLength: 4 }), fc.integer({ min: -12 * 60, max: 14 * 60 }), async (chunkRows, offset) => {
        async function* chunks(): AsyncGenerator<ReportChunk> {
          yield { rows: [], utcOffsetMinutes: offset };
          for (const rows of chunkRows) yield { rows, utcOffsetMinutes: offset };
        }
        let body = '';
        for await (const part of reportAsJson(chunks())) body += part;
        expect(JSON.parse(body)).toEqual(chunkRows.flat().map((r) => expectedRow(r, offset)));
      }),
    );
  });
});
