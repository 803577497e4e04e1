import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { checkNoLoneSurrogates } from './lone-surrogate';

const refusal = (value: unknown, path = ''): string | undefined => {
  try {
    checkNoLoneSurrogates(value, path);
    return undefined;
  } catch (err) {
    if (!(err instanceof HermodError) || err.code !== 'invalid_json') throw err;
    return err.message;
  }
};

/** JSON text nested `depth` arrays deep around `inner`. */
const nested = (depth: number, inner: string) => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;

describe('checkNoLoneSurrogates', () => {
  it('names the field holding half an emoji, in a key or a value', () => {
    expect(refusal({ content: 'Kia ora 👋🏽', members: [{ name: 'Mā\ud83d' }] })).toMatch(/^members\[0\]\.name: has a lone surrogate \\ud83d/);
    expect(refusal({ custom: { ['\udc4b']: 'x' } })).toMatch(/^custom\.\\?/);
    expect(refusal({ content: 'te reo Māori 你好 👋🏽 مرحبا' })).toBeUndefined();
  });

  it('refuses a lone surrogate however deep the nesting, with a 400 and not a stack overflow', () => {
    const body = JSON.parse(`{"content":"x","x":${nested(200_000, '"\\ud83d"')}}`);
    expect(refusal(body)).toMatch(/^x\[0\]\[0\].*: has a lone surrogate/);
    expect(refusal(JSON.parse(nested(200_000, '"Kia ora 👋🏽"')))).toBeUndefined();
  });

  it('keeps the name of a deep field short enough to read', () => {
    const message = refusal(JSON.parse(`{"x":${nested(50_000, '"\\udfff"')}}`))!;
    expect(message.length).toBeLessThan(1_000);
  });

  it('refuses exactly the values with a string or key holding a lone surrogate', () => {
    const lone = fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => String.fromCharCode(u));
    const text = fc.oneof(
      fc.string({ unit: 'grapheme' }),
      fc.tuple(fc.string(), lone, fc.string()).map(([a, b, c]) => a + b + c),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('node')), fc.dictionary(text, tie('node'))),
    })).node;
    const hasLone = (v: unknown): boolean =>
      typeof v === 'string'
        ? /\p{Cs}/u.test(v)
        : Array.isArray(v)
          ? v.some(hasLone)
          : typeof v === 'object' && v !== null && Object.entries(v).some(([k, x]) => hasLone(k) || hasLone(x));
    fc.assert(fc.property(value, (v) => (refusal(v) !== undefined) === hasLone(v)));
  });
});
