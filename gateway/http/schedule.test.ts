import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { describeDuration } from '../../lib/duration';
import { parseSchedule } from './schedule';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-24T09:00:00+13:00');
const iso = (t: number): string => new Date(t).toISOString();

describe('schedules', () => {
  it('take any time from now up to the horizon and refuse anything past it, whatever the horizon (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 60_000, max: 400 * DAY }), fc.double({ min: 0, max: 2, noNaN: true }), (horizon, fraction) => {
        const at = NOW + Math.floor((horizon * fraction) / 1000) * 1000;
        if (at <= NOW + horizon) expect(parseSchedule(iso(at), 'scheduled', horizon, NOW).getTime()).toBe(at);
        else expect(() => parseSchedule(iso(at), 'scheduled', horizon, NOW)).toThrow(HermodError);
      }),
    );
  });

  it('name the configured horizon when refusing', () => {
    expect(() => parseSchedule(iso(NOW + 3653 * DAY), 'scheduled', 60 * DAY, NOW)).toThrow('scheduled is more than 60 days ahead');
    expect(() => parseSchedule(iso(NOW + 2 * DAY), 'scheduled', 36 * 3_600_000, NOW)).toThrow('scheduled is more than 36 hours ahead');
    expect(describeDuration(DAY)).toBe('1 day');
  });
});
