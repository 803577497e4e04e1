import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutBytes } from '../../test/support/cut-bytes';
import type { ListsChunk, ReportChunk } from '../../proto/gen/hermod/v1/campaigns';
import { listAsJson, reportAsJson } from './answers';

/** Report rows as core's text holds them: any text people write, in the interface's field order. */
const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('Kia ora, e hoa mā — tēnā koe', '你好世界 测试', '👋🏽', '+64211234567', '"quoted" \\ back\nslash'),
);
const row = fc.record({ list_name: text, message_id: fc.nat(), mobile: text, status: text });

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
          for (const piece of cutBytes(joined, cuts)) yield { jsonRows: piece };
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

describe('one list answer (property)', () => {
  const member = fc.record({ destination: fc.constantFrom('+64211234567', '+8613800138000', '+447700900123'), params: fc.array(text, { maxLength: 6 }) });
  const list = fc.record({ id: fc.integer({ min: 1, max: 50 }), name: text, members: fc.array(member, { maxLength: 4 }) });

  async function* streamed(lists: { id: number; name: string; members: { destination: string; params: string[] }[] }[]): AsyncGenerator<ListsChunk> {
    for (const l of lists) {
      yield { part: { $case: 'list', value: { id: l.id, name: l.name, created: new Date(Date.UTC(2026, 10, 28)), memberCount: l.members.length } } };
      if (l.members.length > 0) yield { part: { $case: 'members', value: { members: l.members } } };
    }
  }
  const text_ = async (gen: AsyncGenerator<string>): Promise<string> => {
    let out = '';
    for await (const part of gen) out += part;
    return out;
  };

  it('is the asked list alone, whole and valid JSON, even from a core that streams every list (one from before list_id)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(list, { selector: (l) => l.id, minLength: 1, maxLength: 5 }), fc.nat(), async (lists, pick) => {
        const asked = lists[pick % lists.length]!;
        const body = JSON.parse(await text_(listAsJson(streamed(lists), asked.id))) as { id: number; name: string; members: unknown[] };
        expect(body.id).toBe(asked.id);
        expect(body.name).toBe(asked.name);
        expect(body.members).toHaveLength(asked.members.length);
      }),
    );
  });

  it('is not_found when the asked list is not among those core streams', async () => {
    const gen = listAsJson(streamed([{ id: 7, name: 'Ngā Kōrero 你好', members: [] }]), 8);
    await expect(text_(gen)).rejects.toMatchObject({ code: 'not_found' });
  });
});
