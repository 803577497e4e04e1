import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { parseStreamedObject } from './streamed-object';

async function* chunked(bytes: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  let off = 0;
  for (let i = 0; off < bytes.length; i++) {
    const size = cuts[i % cuts.length]!;
    yield bytes.subarray(off, off + size);
    off += size;
  }
}

/** JSON values whose strings are world text: macrons, Cyrillic, CJK, emoji with modifiers, escapes. */
const worldString = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽🎉', 'quote " backslash \\ newline \n', '\u2028\u2029'),
);
const value = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: 'small' },
    worldString,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(worldString, tie('json'), { maxKeys: 4 }),
  ),
})).json;
const body = fc.record(
  { name: worldString, members: fc.array(fc.dictionary(worldString, value, { maxKeys: 4 }), { maxLength: 30 }), extra: value },
  { requiredKeys: ['members'] },
);

describe('streamed JSON object reader (property)', () => {
  it('reads exactly what JSON.parse reads, however the UTF-8 bytes are cut (even inside a character) and however they are spaced', async () => {
    await fc.assert(
      fc.asyncProperty(
        body,
        fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 7 }),
        async (object, cuts, pretty, batchSize) => {
          const bytes = Buffer.from(JSON.stringify(object, null, pretty ? 2 : undefined), 'utf8');
          const fields: Record<string, unknown> = {};
          const members: unknown[] = [];
          const count = await parseStreamedObject(
            chunked(bytes, cuts),
            { arrayField: 'members', maxBytes: 10_000_000, batchSize },
            {
              field: (name, v) => void (fields[name] = v),
              elements: (elements, firstIndex) => {
                expect(firstIndex).toBe(members.length);
                members.push(...elements);
              },
            },
          );
          expect(count).toBe(object.members.length);
          expect({ ...fields, members }).toEqual(JSON.parse(bytes.toString('utf8')));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('answers any truncation of a valid body with a HermodError, never a hang or another error', async () => {
    await fc.assert(
      fc.asyncProperty(body, fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), async (object, fraction) => {
        const bytes = Buffer.from(JSON.stringify(object), 'utf8');
        const cut = bytes.subarray(0, Math.floor(bytes.length * fraction));
        const outcome = await parseStreamedObject(
          chunked(cut, [5]),
          { arrayField: 'members', maxBytes: 10_000_000 },
          { field: () => undefined, elements: () => undefined },
        ).then(
          () => 'parsed',
          (err: unknown) => err,
        );
        expect(outcome).toBeInstanceOf(HermodError);
      }),
      { numRuns: 300 },
    );
  });
});
