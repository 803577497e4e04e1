import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { checkIdentityEncoding } from './identity-encoding';

/** A request with these headers; what the check sets on the answer lands in `answer`. */
function contextWith(headers: Record<string, string>): { ctx: Context; answer: Record<string, string> } {
  const answer: Record<string, string> = {};
  const ctx = { get: (name: string) => headers[name.toLowerCase()] ?? '', set: (name: string, value: string) => (answer[name] = value) };
  return { ctx: ctx as unknown as Context, answer };
}

describe('a request body must come uncompressed', () => {
  it.each([undefined, '', 'identity', 'Identity', 'IDENTITY', ' identity ', 'identity, identity'])('lets Content-Encoding %j through', (value) => {
    const { ctx, answer } = contextWith(value === undefined ? {} : { 'content-encoding': value });
    expect(() => checkIdentityEncoding(ctx)).not.toThrow();
    expect(answer).toEqual({});
  });

  it.each([
    ['gzip', 'gzip'],
    ['GZIP', 'GZIP'],
    ['x-gzip', 'x-gzip'],
    ['deflate', 'deflate'],
    ['br', 'br'],
    ['zstd', 'zstd'],
    ['identity, gzip', 'gzip'],
    ['gzip,br', 'gzip, br'],
  ])('refuses Content-Encoding %j with 415, naming %j and saying identity is accepted', (value, named) => {
    const { ctx, answer } = contextWith({ 'content-encoding': value });
    let thrown: unknown;
    try {
      checkIdentityEncoding(ctx);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(HermodError);
    expect((thrown as HermodError).code).toBe('unsupported_media_type');
    expect((thrown as HermodError).httpStatus).toBe(415);
    expect((thrown as HermodError).message).toBe(`Content-Encoding ${named} is not supported: send the body uncompressed`);
    expect(answer).toEqual({ 'Accept-Encoding': 'identity' });
  });
});
