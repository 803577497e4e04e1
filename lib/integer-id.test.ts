import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIntegerId } from './integer-id';

describe('parseIntegerId', () => {
  it('reads back every positive safe integer written in digits', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (n) => parseIntegerId(String(n)) === n));
  });

  it('refuses what a client did not write as such an id', () => {
    for (const text of [undefined, '', '0', '-1', '+1', '01', '1.5', '1e3', ' 1', '1 ', '9007199254740992', '12345678901234567', '٣', 'abc'])
      expect(parseIntegerId(text), String(text)).toBeUndefined();
  });
});
