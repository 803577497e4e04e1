import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutBytes } from '../../test/support/cut-bytes';
import { hashing } from './body-hash';

async function digestOf(pieces: Buffer[]): Promise<{ digest: string; passed: Buffer }> {
  const hash = createHash('sha256');
  async function* source(): AsyncGenerator<Buffer> {
    yield* pieces;
  }
  const passed: Buffer[] = [];
  for await (const chunk of hashing(source(), hash)) passed.push(chunk);
  return { digest: hash.digest('hex'), passed: Buffer.concat(passed) };
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const rest = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }).map((t) => Buffer.from(t, 'utf8')),
  fc.constantFrom('{"name":"Ngā Kōrero 你好 👋🏽","members":[]}', '\uFEFF', '').map((t) => Buffer.from(t, 'utf8')),
  fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b)),
);
// Bodies that begin with none, part or all of a BOM's bytes (EF, EF BB, EF BB BF), then anything.
const bodies = fc.tuple(fc.integer({ min: 0, max: 3 }), rest).map(([k, tail]) => Buffer.concat([BOM.subarray(0, k), tail]));

describe('the fingerprint of a streamed body (property)', () => {
  it('is the SHA-256 of its bytes less one leading byte-order mark, however the bytes are cut, and passes every byte on', async () => {
    await fc.assert(
      fc.asyncProperty(bodies, fc.boolean(), fc.array(fc.nat(), { maxLength: 5 }), async (body, withBom, at) => {
        const sent = withBom ? Buffer.concat([BOM, body]) : body;
        const { digest, passed } = await digestOf(cutBytes(sent, at));
        const expected = sent.subarray(0, 3).equals(BOM) ? sent.subarray(3) : sent;
        expect(digest).toBe(createHash('sha256').update(expected).digest('hex'));
        expect(passed.equals(sent)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
