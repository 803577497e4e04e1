import { Readable } from 'node:stream';
import fc from 'fast-check';
import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { readJson } from './read-json';
import { parseStreamedObject } from './streamed-object';
import { decodeUtf8, firstInvalidUtf8, Utf8StreamCheck } from './strict-utf8';

/** Strings of any Unicode scalar values (every plane, never a lone surrogate), and the world's text. */
const text = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽🎉', 'quote " backslash \\ newline \n', '\u2028\u2029', '\ufeff'),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(text, tie('value'), { maxKeys: 4 }),
  ),
})).value;
const object = fc.record(
  { content: text, members: fc.array(fc.dictionary(text, json, { maxKeys: 3 }), { maxLength: 10 }), extra: json },
  { requiredKeys: ['members'] },
);

/** Byte sequences no UTF-8 decoder may accept, whatever follows them at a character boundary. */
const invalidSequence = fc.constantFrom(
  [0x80],
  [0xbf], // a continuation byte with no start
  [0xc0, 0x80],
  [0xc1, 0xbf], // overlong two-byte forms
  [0xe0, 0x80, 0xaf], // overlong three-byte form
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf], // surrogates encoded as UTF-8 (CESU-8)
  [0xf0, 0x8f, 0xbf, 0xbf], // overlong four-byte form
  [0xf4, 0x90, 0x80, 0x80], // beyond U+10FFFF
  [0xf5],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xfe],
  [0xff],
  [0xe4, 0xbd],
  [0xf0, 0x9f, 0x91],
  [0xc3], // a character cut short
  [0xe9], // Latin-1 é
);

/** Where characters start in `bytes`, so an insertion never splits one. */
const boundaries = (bytes: Buffer): number[] => {
  const at: number[] = [];
  for (let i = 0; i <= bytes.length; i++) if (i === bytes.length || (bytes[i]! & 0xc0) !== 0x80) at.push(i);
  return at;
};

async function* chunked(bytes: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  let off = 0;
  for (let i = 0; off < bytes.length; i++) {
    const size = cuts[i % cuts.length]!;
    yield bytes.subarray(off, off + size);
    off += size;
  }
}

const cuts = fc.array(fc.integer({ min: 1, max: 13 }), { minLength: 1, maxLength: 6 });

/** Just enough of a Koa context for readJson: headers, the body stream and state. */
function contextFor(bytes: Buffer, cutsAt: number[]): Context {
  return {
    get: (name: string) => (name === 'content-type' ? 'application/json; charset=utf-8' : ''),
    req: Object.assign(Readable.from(chunked(bytes, cutsAt)), { rawHeaders: ['Content-Type', 'application/json; charset=utf-8'] }),
    state: {},
  } as unknown as Context;
}

const streamed = (bytes: Buffer, cutsAt: number[]) => {
  const fields: Record<string, unknown> = {};
  const members: unknown[] = [];
  return parseStreamedObject(
    chunked(bytes, cutsAt),
    { arrayField: 'members', maxBytes: 10_000_000, batchSize: 3 },
    {
      field: (name, v) => void (fields[name] = v),
      elements: (elements) => void members.push(...elements),
    },
  ).then(() => ({ ...fields, members }));
};

const refusal = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'accepted',
    (err: unknown) => err,
  );

describe('request text is UTF-8 (property)', () => {
  it('finds a problem exactly where TextDecoder does, on any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const at = firstInvalidUtf8(bytes);
        let valid = true;
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(bytes);
        } catch {
          valid = false;
        }
        expect(at === -1).toBe(valid);
        if (at >= 0) {
          // Everything before it decodes, so it is the first problem.
          expect(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, at))).not.toThrow();
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts any valid UTF-8 JSON unchanged, however it is cut', async () => {
    await fc.assert(
      fc.asyncProperty(object, cuts, async (value, cutsAt) => {
        const bytes = Buffer.from(JSON.stringify(value), 'utf8');
        expect(decodeUtf8(bytes)).toBe(JSON.stringify(value));
        expect(await readJson(contextFor(bytes, cutsAt), 10_000_000)).toEqual(value);
        expect(await streamed(bytes, cutsAt)).toEqual(value);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses any body with an invalid UTF-8 sequence inserted, naming the byte where it starts, however it is cut', async () => {
    await fc.assert(
      fc.asyncProperty(object, invalidSequence, fc.nat(), cuts, async (value, sequence, pick, cutsAt) => {
        const good = Buffer.from(JSON.stringify(value), 'utf8');
        const places = boundaries(good);
        const at = places[pick % places.length]!;
        const bytes = Buffer.concat([good.subarray(0, at), Buffer.from(sequence), good.subarray(at)]);
        const message = `request body is not valid UTF-8 at byte ${at}`;

        expect(() => decodeUtf8(bytes)).toThrow(message);
        const check = new Utf8StreamCheck();
        expect(() => {
          for (const piece of chunkedSync(bytes, cutsAt)) check.push(piece);
          check.end();
        }).toThrow(message);
        for (const outcome of [await refusal(readJson(contextFor(bytes, cutsAt), 10_000_000)), await refusal(streamed(bytes, cutsAt))]) {
          expect(outcome).toBeInstanceOf(HermodError);
          expect(outcome).toMatchObject({ code: 'invalid_json', message });
        }
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a lone surrogate escape anywhere in a string or key, and accepts escaped pairs', async () => {
    const lone = fc.constantFrom('\\ud83d', '\\uDC4B', '\\udbff', '\\ud800');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('content', 'key', 'member', 'nested'), lone, text, async (where, loneEscape, around) => {
        const s = JSON.stringify(around).slice(1, -1);
        const bad = `${s}${loneEscape}${s}`;
        const body =
          where === 'content'
            ? `{"content":"${bad}","members":[]}`
            : where === 'key'
              ? `{"${bad}":1,"members":[]}`
              : where === 'member'
                ? `{"members":[{"destination":"+6421000001"},{"param1":"${bad}"}]}`
                : `{"extra":{"a":[1,"${bad}"]},"members":[]}`;
        const bytes = Buffer.from(body, 'utf8');
        for (const outcome of [await refusal(readJson(contextFor(bytes, [7]), 10_000_000)), await refusal(streamed(bytes, [7]))]) {
          expect(outcome).toMatchObject({ code: 'invalid_json', message: expect.stringContaining(`lone surrogate ${loneEscape.toLowerCase()}`) });
        }
        const paired = Buffer.from(body.replace(loneEscape, '\\ud83d\\udc4b'), 'utf8');
        expect(await readJson(contextFor(paired, [7]), 10_000_000)).toEqual(JSON.parse(paired.toString('utf8')));
      }),
      { numRuns: 300 },
    );
  });
});

function* chunkedSync(bytes: Buffer, cutsAt: number[]): Generator<Buffer> {
  let off = 0;
  for (let i = 0; off < bytes.length; i++) {
    const size = cutsAt[i % cutsAt.length]!;
    yield bytes.subarray(off, off + size);
    off += size;
  }
}
