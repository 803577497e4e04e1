import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCampaignSchedule } from './campaign-schedule';

const HORIZON = 365 * 24 * 3600 * 1000;
const NOW = Date.parse('2026-12-02T17:45:00Z');

describe("a campaign's schedule", () => {
  it('keeps a time in the past as sent, with its offset, where history can hold it (from 1900)', () => {
    expect(parseCampaignSchedule('1969-12-31T23:59:59+13:00', HORIZON, NOW)).toEqual({ at: new Date('1969-12-31T10:59:59Z'), utcOffsetMinutes: 780 });
    expect(parseCampaignSchedule('1900-01-01T00:00:00Z', HORIZON, NOW).at).toEqual(new Date('1900-01-01T00:00:00Z'));
  });

  it('takes a time before 1900 (0001-01-01, an unset date in many languages) as now, rather than one history would store as another date', () => {
    expect(parseCampaignSchedule('0001-01-01T00:00:00Z', HORIZON, NOW)).toEqual({ at: new Date(NOW), utcOffsetMinutes: 0 });
    expect(parseCampaignSchedule('0000-01-01T00:00:00Z', HORIZON, NOW).at).toEqual(new Date(NOW));
    expect(parseCampaignSchedule('1899-12-31T23:59:59.999+05:00', HORIZON, NOW)).toEqual({ at: new Date(NOW), utcOffsetMinutes: 300 });
  });

  it('is always a time history can hold, 1900 to 2299, whatever past date is sent (property)', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date(NOW), noInvalidDate: true }), (d) => {
        const at = parseCampaignSchedule(d.toISOString().replace(/^\+0*/, ''), HORIZON, NOW).at.getTime();
        expect(at).toBeGreaterThanOrEqual(Date.parse('1900-01-01T00:00:00Z'));
        expect(at).toBeLessThanOrEqual(NOW);
      }),
    );
  });
});
