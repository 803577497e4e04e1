import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { MAX_JSON_DEPTH } from './json-depth';
import { readJson } from './read-json';

function contextFor(body: string): Context {
  return {
    get: (name: string) => (name === 'content-type' ? 'application/json' : ''),
    req: Object.assign(Readable.from([Buffer.from(body)]), { rawHeaders: ['Content-Type', 'application/json'] }),
    state: {},
  } as unknown as Context;
}

const deep = (depth: number) => `{"destination":"+64211234567","content":"Kia ora","x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

describe('readJson', () => {
  it(`refuses a body nested deeper than ${MAX_JSON_DEPTH} levels with 400 invalid_json before parsing it, and takes one at the limit (security trial)`, async () => {
    await expect(readJson(contextFor(deep(MAX_JSON_DEPTH)), 1_000_000)).resolves.toMatchObject({ content: 'Kia ora' });
    const err = await readJson(contextFor(deep(450_000)), 1_000_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HermodError);
    expect((err as HermodError).code).toBe('invalid_json');
    expect((err as HermodError).httpStatus).toBe(400);
    expect((err as HermodError).message).toBe(`request body nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`);
  });

  it('refuses a body that names a field twice in one object with 400 invalid_json, which JSON.parse would read as the last of them (trial)', async () => {
    const err = await readJson(contextFor('{"destination":"+6421000001","content":"Kia ora","desti\\u006eation":"+6421000002"}'), 1_000_000).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'invalid_json', message: 'request body names "destination" twice in one object: give each field once' });
    await expect(readJson(contextFor('{"destination":"+6421000001","content":"Kia ora","extra":{"destination":"x"}}'), 1_000_000)).resolves.toMatchObject({
      destination: '+6421000001',
    });
  });
});
