import { checkHorizon, unschedulable } from '../http/schedule';

/** The earliest time history's DateTime64 holds: one before it would be stored, and shown back, as another date. */
const EARLIEST = Date.parse('1900-01-01T00:00:00Z');

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * A campaign's `schedule`: an RFC 3339 date-time with an offset, within the
 * schedule horizon (as for v1 and v2 messages). A time in the past means
 * "now", and one before 1900, which history cannot hold, is kept as now. The
 * offset is kept: the campaign's report gives its dates in it, so a sender in
 * Auckland reads Auckland times.
 */
export function parseCampaignSchedule(text: string, horizonMs: number, now = Date.now()): { at: Date; utcOffsetMinutes: number } {
  const m = RFC3339.exec(text);
  const at = Date.parse(text);
  if (!m || Number.isNaN(at)) throw unschedulable(text, 'schedule');
  checkHorizon(at, 'schedule', horizonMs, now);
  const utcOffsetMinutes = m[1] ? 0 : (m[2] === '-' ? -1 : 1) * (Number(m[3]) * 60 + Number(m[4]));
  // In the past it means now anyway; before 1900 (0001-01-01 is many languages' unset date) it is kept as the time it came.
  return { at: new Date(at < EARLIEST ? now : at), utcOffsetMinutes };
}
