import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth';

const nested = (depth: number, open = '[', close = ']'): string => open.repeat(depth) + close.repeat(depth);

/** The nesting depth of a parsed value, counted as JSON text nests it. */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === 'object') return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

describe('nestsDeeperThan', () => {
  it('takes a body nested to the limit and refuses one a level deeper, arrays and objects alike', () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    const objects = '{"a":'.repeat(MAX_JSON_DEPTH + 1) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1);
    expect(nestsDeeperThan(objects)).toBe(true);
  });

  it('does not count brackets inside strings, escaped quotes among them', () => {
    const text = JSON.stringify({ content: `Kia ora ${'[{'.repeat(500)} "quoted \\" ${'['.repeat(100)}`, destination: '+64211234567' });
    expect(nestsDeeperThan(text)).toBe(false);
  });

  it('refuses a megabyte nested half a million deep, which JSON.parse took 1.3 s over (security trial)', () => {
    expect(nestsDeeperThan(`{"destination":"+64211234567","content":"hi","x":${nested(450_000)}}`)).toBe(true);
  });

  it('agrees with the depth of any JSON value, whatever strings it holds', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, max) => {
        expect(nestsDeeperThan(JSON.stringify(value), max)).toBe(depthOf(value) > max);
      }),
      { numRuns: 500 },
    );
  });
});
