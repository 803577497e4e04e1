import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReportChunk } from '../../proto/gen/hermod/v1/campaigns';
import { reportAsJson } from './answers';

/** Report rows as core's text holds them: any text people write, in the interface's field order. */
const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('Kia ora, e hoa mā — tēnā koe', '你好世界 测试', '👋🏽', '+64211234567', '"quoted" \\ back\nslash'),
);
const row = fc.record({ list_name: text, message_id: fc.nat(), mobile: text, status: text });

/** The text split at arbitrary byte offsets, as core's pieces may be (inside a row, inside a character). */
function piecesOf(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const to of [...at, bytes.length]) {
    pieces.push(bytes.subarray(from, to));
    from = to;
  }
  return pieces;
}

async function answer(chunks: AsyncIterable<ReportChunk>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of reportAsJson(chunks)) parts.push(typeof part === 'string' ? Buffer.from(part) : Buffer.from(part));
  return Buffer.concat(parts);
}

describe('report answer (property)', () => {
  it("is core's rows in one JSON array, byte for byte, however core splits the text", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(row, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), async (rows, cuts) => {
        const joined = Buffer.from(rows.map((r) => JSON.stringify(r)).join(','));
        async function* chunks(): AsyncGenerator<ReportChunk> {
          yield { jsonRows: Buffer.alloc(0) };
          for (const piece of piecesOf(joined, cuts)) yield { jsonRows: piece };
        }
        const body = await answer(chunks());
        expect(body.equals(Buffer.concat([Buffer.from('['), joined, Buffer.from(']')]))).toBe(true);
        expect(JSON.parse(body.toString('utf8'))).toEqual(rows);
      }),
    );
  });

  it('is an empty array for a campaign without rows, and nothing at all when core fails before its first chunk', async () => {
    async function* none(): AsyncGenerator<ReportChunk> {
      yield { jsonRows: Buffer.alloc(0) };
    }
    expect((await answer(none())).toString()).toBe('[]');
    async function* missing(): AsyncGenerator<ReportChunk> {
      yield* [];
      throw new Error('no campaign 42 — kāore i kitea');
    }
    const it = reportAsJson(missing())[Symbol.asyncIterator]();
    await expect(it.next()).rejects.toThrow('kāore i kitea');
  });
});
