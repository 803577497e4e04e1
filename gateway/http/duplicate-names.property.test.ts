import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstDuplicateName } from './duplicate-names';

/** Any JSON text JSON.stringify writes (every object's names once), pretty-printed or not. */
const jsonText = fc.tuple(fc.jsonValue(), fc.constantFrom(undefined, 2, '\t')).map(([value, space]) => JSON.stringify(value, null, space));

describe('names an object holds twice (property)', () => {
  it('finds none in any JSON text JSON.stringify writes, whatever its strings hold', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        expect(firstDuplicateName(text)).toBeUndefined();
      }),
    );
  });

  it('finds the name when an object of any JSON is given one of its names again, however that name is escaped', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { minKeys: 1, maxKeys: 4 }),
        fc.boolean(),
        (outer, object, escapeIt) => {
          const name = Object.keys(object)[0]!;
          const written = escapeIt
            ? `"${name
                .split('')
                .map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
                .join('')}"`
            : JSON.stringify(name);
          const inner = `${JSON.stringify(object).slice(0, -1)},${written}:null}`;
          const text = `{"outer":${JSON.stringify(outer)},"list":[1,${inner},"x"]}`;
          expect(() => JSON.parse(text)).not.toThrow();
          expect(firstDuplicateName(text)).toBe(name);
        },
      ),
    );
  });

  it('reads names per object: the same name in two objects, nested or side by side, or as a value, is no duplicate', () => {
    expect(firstDuplicateName('{"a":{"a":1},"b":[{"a":2},{"a":3}],"c":"a"}')).toBeUndefined();
    expect(firstDuplicateName('{"destination":"+6421000001","destination":"+6421000002","content":"x"}')).toBe('destination');
    expect(firstDuplicateName('{"tūnga":1, "t\\u016bnga" :2}')).toBe('tūnga');
    expect(firstDuplicateName('{"a":"\\"a\\":","a":1}')).toBe('a');
  });
});
