import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatAbsoluteTime, parseAbsoluteTime } from './absolute-time';

describe('SMPP absolute time', () => {
  it('writes a time in UTC with its tenths of a second, as YYMMDDhhmmsstnnp', () => {
    expect(formatAbsoluteTime(Date.UTC(2026, 11, 2, 18, 30, 12, 345))).toBe('261202183012300+');
  });

  it('reads a time written ahead of or behind UTC in quarter hours', () => {
    expect(parseAbsoluteTime('261202183012000+')).toBe(Date.UTC(2026, 11, 2, 18, 30, 12));
    // 13:00 at UTC+13 (48 quarter hours is the most the spec allows; 52 is not) and 08:30 at UTC-05:00.
    expect(parseAbsoluteTime('261203070000048+')).toBe(Date.UTC(2026, 11, 2, 19, 0, 0));
    expect(parseAbsoluteTime('261202133012020-')).toBe(Date.UTC(2026, 11, 2, 18, 30, 12));
  });

  it('reads nothing from an empty, relative or malformed time', () => {
    for (const text of ['', '000001000000000R', '2612021830', '261302183012000+', 'abcdefghijklmnop']) expect(parseAbsoluteTime(text)).toBeUndefined();
  });

  it('reads nothing from a day its month does not have (31 November, 29 February of a common year)', () => {
    expect(parseAbsoluteTime('261131120000000+')).toBeUndefined();
    expect(parseAbsoluteTime('270229120000000+')).toBeUndefined();
    expect(parseAbsoluteTime('280229120000000+')).toBe(Date.UTC(2028, 1, 29, 12));
    expect(parseAbsoluteTime('261231235959900+')).toBe(Date.UTC(2026, 11, 31, 23, 59, 59, 900));
  });

  it('reads back every time it writes, to the tenth of a second', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 11, 31) }), (ms) => {
        expect(parseAbsoluteTime(formatAbsoluteTime(ms))).toBe(ms - (ms % 100));
      }),
    );
  });
});
