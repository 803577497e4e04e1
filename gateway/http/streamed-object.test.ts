import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { parseStreamedObject, type StreamedObjectOptions } from './streamed-object';

const OPTIONS: StreamedObjectOptions = { arrayField: 'members', maxBytes: 1_000_000 };

async function* fromChunks(chunks: Buffer[]): AsyncGenerator<Buffer> {
  for (const chunk of chunks) yield chunk;
}

function split(body: string | Buffer, size: number): Buffer[] {
  const bytes = Buffer.from(body);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}

/** Runs the parser and records everything the handler saw. */
async function parse(chunks: Buffer[], options: Partial<StreamedObjectOptions> = {}) {
  const fields: [string, unknown][] = [];
  const batches: { firstIndex: number; elements: unknown[] }[] = [];
  const count = await parseStreamedObject(
    fromChunks(chunks),
    { ...OPTIONS, ...options },
    {
      field: (name, value) => void fields.push([name, value]),
      elements: (elements, firstIndex) => void batches.push({ firstIndex, elements }),
    },
  );
  const elements = batches.flatMap((b) => b.elements);
  // Rebuilt the way JSON.parse would see the body, for comparison (an absent array reads as empty).
  const object: Record<string, unknown> = Object.fromEntries(fields);
  object.members ??= elements;
  return { count, fields, batches, elements, object };
}

async function parseError(chunks: Buffer[], options: Partial<StreamedObjectOptions> = {}): Promise<HermodError> {
  const err = await parse(chunks, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HermodError);
  return err as HermodError;
}

describe('parseStreamedObject', () => {
  it('delivers the array elements in order, in batches with the index of their first element', async () => {
    const members = Array.from({ length: 10 }, (_, i) => ({ destination: `+642100000${i}`, param1: `Ānaru ${i} — Привет, 你好 👋🏽` }));
    const body = JSON.stringify({ members });
    // Chunks of 1 and 7 bytes cut inside the UTF-8 of ā, п, 你 and 👋🏽.
    for (const size of [1, 7, 64, Buffer.byteLength(body)]) {
      const { count, batches } = await parse(split(body, size), { batchSize: 3 });
      expect(count).toBe(10);
      expect(batches.map((b) => b.firstIndex)).toEqual([0, 3, 6, 9]);
      expect(batches.map((b) => b.elements)).toEqual([members.slice(0, 3), members.slice(3, 6), members.slice(6, 9), members.slice(9)]);
    }
  });

  it('reports the other fields whether they come before or after the array, in body order', async () => {
    const body = '{"name":"Hoko o te kōanga 🌸","members":[{"destination":"+6421000001"}],"strict_validation":false,"n":-1.5e3}';
    const { fields, elements } = await parse(split(body, 5));
    expect(fields).toEqual([
      ['name', 'Hoko o te kōanga 🌸'],
      ['strict_validation', false],
      ['n', -1500],
    ]);
    expect(elements).toEqual([{ destination: '+6421000001' }]);
  });

  it('parses nested objects and arrays in other fields whole', async () => {
    const other = { a: [1, { b: ['c', null, true] }], d: { e: { f: [] } } };
    const { fields } = await parse(split(JSON.stringify({ other, members: [], empty: {} }), 3));
    expect(fields).toEqual([
      ['other', other],
      ['empty', {}],
    ]);
  });

  it('returns zero and never calls elements when the array field is absent', async () => {
    const { count, batches, fields } = await parse(split('{"name":"你好世界","list":[1,2]}', 4));
    expect(count).toBe(0);
    expect(batches).toEqual([]);
    expect(fields).toEqual([
      ['name', '你好世界'],
      ['list', [1, 2]],
    ]);
  });

  it('reports an empty array as zero elements', async () => {
    const { count, batches } = await parse(split('{"members":[ \n ]}', 1));
    expect(count).toBe(0);
    expect(batches).toEqual([]);
  });

  it('hands a members value that is not an array to field', async () => {
    for (const value of ['"a string"', '{"x":[1]}', 'null', '42']) {
      const { count, batches, fields } = await parse(split(`{"members":${value}}`, 2));
      expect(count).toBe(0);
      expect(batches).toEqual([]);
      expect(fields).toEqual([['members', JSON.parse(value)]]);
    }
  });

  it('accepts a byte-order mark and surrounding whitespace', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(' \r\n\t{"members":[1]} \n')]);
    for (const size of [1, 2, body.length]) {
      expect((await parse(split(body, size))).elements).toEqual([1]);
    }
  });

  it('gives the same result as JSON.parse however a tricky body is split into chunks', async () => {
    const body =
      '{"na\\"me":"a \\\\\\" b ] } [ {","\\u006dembers":["x\\"]",{"k":"\\\\","v":"\\u00e9 é 😀 [{,\\"}"},1,-0.5e-3,' +
      'null,true,[2,[3,{}]],"}",{"a\\\\":"\\\\"},"日本語"],"nested":{"a":[1,{"b":"]"}]},"e":"😀","t":[]}';
    const expected = JSON.parse(body) as unknown;
    const bytes = Buffer.from(body);
    for (let at = 0; at <= bytes.length; at++) {
      const { object } = await parse([bytes.subarray(0, at), bytes.subarray(at)], { batchSize: 2 });
      expect(object, `split at byte ${at}`).toEqual(expected);
    }
    for (const size of [1, 2, 3, 5]) {
      expect((await parse(split(bytes, size), { batchSize: 2 })).object, `chunks of ${size}`).toEqual(expected);
    }
  });

  it('refuses an empty body with a clear message', async () => {
    for (const body of ['', '  \n']) {
      const err = await parseError(split(body, 1));
      expect(err.code).toBe('invalid_json');
      expect(err.message).toBe('request body is empty; a JSON object is required');
    }
  });

  it.each([
    ['null', 'null', 'null'],
    ['a string', '"members"', 'a string'],
    ['a number', '-12', 'a number'],
    ['true', 'true', 'true'],
    ['false, then a newline', 'false\n', 'false'],
    ['an array of objects with Māori and emoji', ' [{"destination":"+6421000001","param1":"Ā 👋🏽"}] ', 'an array'],
    ['an array', '[{"destination":"+6421000001"}]', 'an array'],
  ])('says a body of %s is valid JSON but not the object required', async (_, body, what) => {
    const err = await parseError(split(body, 1));
    expect(err.code).toBe('invalid_json');
    expect(err.message).toBe(`request body must be a JSON object, not ${what}`);
  });

  it('refuses a large body that starts as null would as no JSON at all', async () => {
    const err = await parseError(split(`nonsense ${'Kia ora 👋🏽 '.repeat(8000)}`, 4096));
    expect(err.message).toBe("request body is not valid JSON: expected '{' but found 'n' (near byte 0)");
  });

  it('refuses a large body that starts as an array as not an object once it passes 64 KiB, without reading it whole', async () => {
    const members = Array.from({ length: 5000 }, (_, i) => ({ destination: `+64210${String(i).padStart(5, '0')}`, param1: 'Kia ora 👋🏽' }));
    const body = JSON.stringify(members);
    expect(body.length).toBeGreaterThan(128 * 1024);
    const err = await parseError(split(body, 4096));
    expect(err.message).toBe('request body must be a JSON object, not an array');
  });

  // They start as null, true and false do, and said "must be a JSON object, not null, true or false".
  it.each([
    ['nonsense', "expected '{' but found 'n' (near byte 0)"],
    ['  tea', "expected '{' but found 't' (near byte 2)"],
    ['fals', "expected '{' but found 'f' (near byte 0)"],
    ['nullx', "expected '{' but found 'n' (near byte 0)"],
    ['null null', "expected '{' but found 'n' (near byte 0)"],
    // They start as a number, a string and an array do, and were told they must be an object, not one.
    ['12abc', "expected '{' but found '1' (near byte 0)"],
    ['"unterminated', `expected '{' but found '"' (near byte 0)`],
    ['[1', "expected '{' but found '[' (near byte 0)"],
    ['[1] x', "expected '{' but found '[' (near byte 0)"],
  ])('says a body of %j is not JSON at all', async (body, message) => {
    for (const size of [1, 3, 64]) {
      const err = await parseError(split(body, size));
      expect(err.code).toBe('invalid_json');
      expect(err.message).toBe(`request body is not valid JSON: ${message}`);
    }
  });

  it.each([
    ['an array at the top level', '[]'],
    ['a string at the top level', '"members"'],
    ['a trailing comma in the array', '{"members":[{"a":1},]}'],
    ['a trailing comma split from the closing bracket', '{"members":[{"a":1},\n]}'],
    ['a leading comma in the array', '{"members":[,1]}'],
    ['two commas in a row in the array', '{"members":[1,,2]}'],
    ['elements without a comma between them', '{"members":[1 2]}'],
    ['a malformed element', '{"members":[{"a":tru}]}'],
    ['a brace closing the array', '{"members":[{"a":1}}'],
    ['a truncated body', '{"members":[{"a":1}'],
    ['a body truncated inside a string', '{"name":"abc'],
    ['trailing garbage', '{} x'],
    ['a second object', '{}{}'],
    ['a missing colon', '{"name" "x"}'],
    ['a missing value', '{"name":}'],
    ['a malformed value in another field', '{"name":{"a":[1,]}}'],
    ['a bare word value', '{"name":yes}'],
    ['a trailing comma after the last field', '{"name":1,}'],
    ['an unquoted field name', '{name:1}'],
    ['a raw control character in a string', '{"name":"a\u0001b"}'],
    ['a lone byte-order mark fragment', Buffer.from([0xef, 0x7b, 0x7d])],
  ])('refuses %s as invalid_json', async (_, body) => {
    for (const size of [1, body.length || 1]) {
      expect((await parseError(split(body, size))).code).toBe('invalid_json');
    }
  });

  it('names the malformed element and its approximate byte offset', async () => {
    const good = '{"destination":"+6421000001"},'.repeat(1000);
    const prefix = `{"members":[${good}`;
    const err = await parseError(split(`${prefix}{"destination":+64}]}`, 4096));
    expect(err.code).toBe('invalid_json');
    expect(err.message).toContain('members[1000]');
    expect(err.message).toContain(`near byte ${prefix.length}`);
  });

  it('refuses the array field appearing twice', async () => {
    const err = await parseError(split('{"members":[1],"name":"x","members":[2]}', 3));
    expect(err.code).toBe('invalid_json');
    expect(err.message).toContain('field members appears twice');
  });

  it('keeps the last of a repeated ordinary field, as JSON.parse does', async () => {
    const { object } = await parse(split('{"name":"a","members":[],"name":"b"}', 3));
    expect(object).toEqual({ name: 'b', members: [] });
  });

  it('stops reading as soon as the body passes the size limit', async () => {
    const head = Buffer.from('{"members":[');
    const element = Buffer.from(`"${'x'.repeat(60)}",`);
    let pulled = 0;
    async function* source(): AsyncGenerator<Buffer> {
      yield head;
      for (;;) {
        pulled++;
        yield element;
      }
    }
    const err = await parseStreamedObject(source(), { arrayField: 'members', maxBytes: 1000 }, { field() {}, elements() {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HermodError);
    expect((err as HermodError).code).toBe('body_too_large');
    expect((err as HermodError).message).toBe('request body exceeds 1000 bytes');
    expect(pulled).toBe(Math.floor((1000 - head.length) / element.length) + 1);
  });

  it('refuses a member far larger than any member can be as soon as it passes the limit, without reading or holding the rest', async () => {
    const chunk = Buffer.from('ā'.repeat(32 * 1024)); // 64 KiB of te reo Māori's long vowel
    let pulled = 0;
    async function* source(): AsyncGenerator<Buffer> {
      yield Buffer.from('{"name":"Rārangi","members":[{"destination":"+6421000001"},{"destination":"+6421000002","param1":"');
      for (let i = 0; i < 3200; i++) {
        pulled++;
        yield chunk; // 200 MB, if it were all read
      }
      yield Buffer.from('"}]}');
    }
    const err = await parseStreamedObject(
      source(),
      { arrayField: 'members', maxBytes: 256 * 1024 * 1024, maxElementBytes: 100_000 },
      { field() {}, elements() {} },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HermodError);
    expect((err as HermodError).code).toBe('unprocessable');
    expect((err as HermodError).message).toBe('members[1]: a member may be at most 100000 bytes of JSON');
    expect(pulled).toBeLessThanOrEqual(3);
  });

  it('refuses another field far larger than any field can be as soon as it passes the limit', async () => {
    let pulled = 0;
    async function* source(): AsyncGenerator<Buffer> {
      yield Buffer.from('{"content":"');
      for (let i = 0; i < 1000; i++) {
        pulled++;
        yield Buffer.from('你'.repeat(10_000));
      }
      yield Buffer.from('","members":[]}');
    }
    const err = await parseStreamedObject(
      source(),
      { arrayField: 'members', maxBytes: 256 * 1024 * 1024, maxElementBytes: 100_000 },
      { field() {}, elements() {} },
    ).catch((e: unknown) => e);
    expect((err as HermodError).message).toBe('content: a field may be at most 100000 bytes of JSON');
    expect(pulled).toBeLessThanOrEqual(4);
  });

  it('refuses a field just over the limit whether it came in one chunk or its end in the last one, and takes one at the limit', async () => {
    const body = (bytes: number) => `{"name":"${'ā'.repeat((bytes - 2) / 2)}","members":[1]}`;
    const options = { maxBytes: 1_000_000, maxElementBytes: 100_000 };
    for (const size of [100_000, 60_000, 1_000]) {
      const over = await parse(split(body(100_002), size), options).catch((e: unknown) => e);
      expect((over as HermodError).message, `chunks of ${size}`).toBe('name: a field may be at most 100000 bytes of JSON');
      expect((await parse(split(body(100_000), size), options)).count).toBe(1);
    }
  });

  it('refuses a member just over the limit however its bytes came in chunks, naming it, and takes one at the limit (review)', async () => {
    const member = (bytes: number) => `{"destination":"+6421000001","param1":"x${'ā'.repeat((bytes - 42) / 2)}"}`;
    expect(Buffer.byteLength(member(100_000))).toBe(100_000);
    const body = (bytes: number) => `{"name":"Rārangi","members":[{"destination":"+6421000002"},${member(bytes)},{"destination":"+6421000003"}]}`;
    const options = { maxBytes: 1_000_000, maxElementBytes: 100_000 };
    for (const size of [1_000_000, 60_000, 1_000]) {
      const over = await parse(split(body(100_002), size), options).catch((e: unknown) => e);
      expect((over as HermodError).message, `chunks of ${size}`).toBe('members[1]: a member may be at most 100000 bytes of JSON');
      expect((await parse(split(body(100_000), size), options)).count).toBe(3);
    }
    // The last member too, ended by the array's close.
    const last = `{"members":[{"destination":"+6421000002"},${member(100_002)}]}`;
    expect(((await parse(split(last, 1_000_000), options).catch((e: unknown) => e)) as HermodError).message).toBe(
      'members[1]: a member may be at most 100000 bytes of JSON',
    );
  });

  it('accepts a body of exactly the size limit', async () => {
    const body = '{"members":[1,2,3]}';
    expect((await parse(split(body, 4), { maxBytes: body.length })).count).toBe(3);
  });

  it('reads no further input until the handler has finished with the elements it was given', async () => {
    let pulled = 0;
    async function* source(): AsyncGenerator<Buffer> {
      for (const chunk of ['{"members":[1,2,', '3,4,', '5,6', ']}']) {
        pulled++;
        yield Buffer.from(chunk);
      }
    }
    const pulledWhenCalled: number[] = [];
    const count = await parseStreamedObject(
      source(),
      { ...OPTIONS, batchSize: 2 },
      {
        field() {},
        async elements(elements) {
          pulledWhenCalled.push(pulled);
          await new Promise((resolve) => setTimeout(resolve, 5));
          expect(pulled, `while handling ${JSON.stringify(elements)}`).toBe(pulledWhenCalled.at(-1));
        },
      },
    );
    expect(count).toBe(6);
    expect(pulledWhenCalled).toEqual([1, 2, 4]);
  });

  it('passes on an error thrown by the handler', async () => {
    const err = await parseStreamedObject(fromChunks(split('{"members":[1]}', 4)), OPTIONS, {
      field() {},
      elements() {
        throw new HermodError('broadcast_limit', 'too many');
      },
    }).catch((e: unknown) => e);
    expect((err as HermodError).code).toBe('broadcast_limit');
  });

  it('streams 200,000 members from a Readable of 64 KiB chunks', async () => {
    const n = 200_000;
    const member = (i: number) => ({ destination: `+64${21_000_000 + i}`, param1: `p${i % 97}` });
    const parts = ['{"name":"big","members":['];
    for (let i = 0; i < n; i++) parts.push((i === 0 ? '' : ',') + JSON.stringify(member(i)));
    parts.push('],"strict_validation":false}');
    const readable = Readable.from(split(parts.join(''), 64 * 1024), { objectMode: true });

    const sample = new Map<number, unknown>();
    let next = 0;
    const fields: [string, unknown][] = [];
    const count = await parseStreamedObject(
      readable,
      { arrayField: 'members', maxBytes: 100_000_000 },
      {
        field: (name, value) => void fields.push([name, value]),
        elements(elements, firstIndex) {
          expect(firstIndex).toBe(next);
          expect(elements.length).toBeLessThanOrEqual(5000);
          next += elements.length;
          for (let i = 0; i < elements.length; i++) if ((firstIndex + i) % 9973 === 0) sample.set(firstIndex + i, elements[i]);
        },
      },
    );
    expect(count).toBe(n);
    expect(next).toBe(n);
    expect(fields).toEqual([
      ['name', 'big'],
      ['strict_validation', false],
    ]);
    expect(sample.size).toBe(Math.ceil(n / 9973));
    for (const [i, value] of sample) expect(value).toEqual(member(i));
  });
  it('hands large members on before a whole batch of them is held: at most about 1 MiB of parsed members waits (security trial)', async () => {
    // 300 members of 60 KB each: held until 5,000 had come, a few parallel bodies like this filled the gateway's heap.
    const members = Array.from({ length: 300 }, (_, i) => ({ destination: `+6421${String(i).padStart(6, '0')}`, note: 'ā'.repeat(30_000) }));
    const { batches, count } = await parse(split(JSON.stringify({ members }), 64 * 1024), { maxBytes: 100_000_000 });
    expect(count).toBe(300);
    for (const b of batches) expect(Buffer.byteLength(JSON.stringify(b.elements))).toBeLessThan(1024 * 1024 + 64 * 1024 * 2);
    expect(batches.flatMap((b) => b.elements)).toEqual(members);
  });
  it('refuses a member or a field nested deeper than 64 levels before parsing it, and takes one at 64 (review: 32,000 levels in 64 KiB held the gateway)', async () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const member = (depth: number) => `{"destination":"+6421000001","x":${nested(depth - 1)}}`;
    expect((await parse(split(`{"name":"a","members":[${member(64)}],"x":${nested(64)}}`, 7))).count).toBe(1);
    const deepMember = await parseError(split(`{"name":"a","members":[${member(65)}]}`, 7));
    expect(deepMember.code).toBe('invalid_json');
    expect(deepMember.message).toBe('request body nests deeper than 64 levels of objects and arrays, in members[0]');
    const deepField = await parseError(split(`{"name":"a","x":${nested(65)},"members":[]}`, 7));
    expect(deepField.message).toBe('request body nests deeper than 64 levels of objects and arrays, in x');
    expect((await parseError([Buffer.from(`{"members":[${member(32_000)}]}`)])).message).toMatch(/nests deeper than 64 levels/);
  });
});
