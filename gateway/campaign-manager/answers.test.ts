import { describe, expect, it } from 'vitest';
import { formatAtOffset } from './answers';

describe('report dates', () => {
  it('are RFC 3339 in the campaign’s offset, to the millisecond', () => {
    const ms = Date.UTC(2026, 10, 23, 20, 30, 15, 7);
    expect(formatAtOffset(ms, 780)).toBe('2026-11-24T09:30:15.007+13:00');
    expect(formatAtOffset(ms + 993, 780)).toBe('2026-11-24T09:30:16.000+13:00');
    expect(formatAtOffset(ms, -210)).toBe('2026-11-23T17:00:15.007-03:30');
    expect(formatAtOffset(ms, 0)).toBe('2026-11-23T20:30:15.007+00:00');
  });

  it('handle times before 1970 and the same second in another offset', () => {
    expect(formatAtOffset(-1, 0)).toBe('1969-12-31T23:59:59.999+00:00');
    const ms = Date.UTC(2026, 0, 1, 0, 0, 0, 500);
    expect(formatAtOffset(ms, 60)).toBe('2026-01-01T01:00:00.500+01:00');
    expect(formatAtOffset(ms, 0)).toBe('2026-01-01T00:00:00.500+00:00');
  });
});
