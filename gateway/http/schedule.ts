import { describeDuration } from '../../lib/duration';
import { HermodError } from '../../lib/errors';

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** Refuses a time further ahead than the horizon (HERMOD_SCHEDULE_HORIZON, 60 days by default). */
export function checkHorizon(at: number, field: string, horizonMs: number, now = Date.now()): void {
  if (at > now + horizonMs) {
    const description = `is more than ${describeDuration(horizonMs)} ahead`;
    throw new HermodError('invalid_attrib', `${field} ${description}`, { fields: [{ field, description }] });
  }
}

/**
 * The error for a schedule that is no time hermod can schedule at, saying
 * what is wrong with it: not RFC 3339 with an offset; a leap second
 * (23:59:60, valid RFC 3339, but JavaScript time has no second 60); or no
 * such day or time (30 February, 25:00).
 */
export function unschedulable(text: string, field: string): HermodError {
  const description = !RFC3339.test(text)
    ? 'must be an RFC 3339 date-time with an offset'
    : /:60(?:\.\d+)?(?:[Zz]|[+-])/.test(text)
      ? `${JSON.stringify(text).slice(1, -1)} is a leap second (second 60), which hermod cannot schedule at: give second 59 or the next minute`
      : `${JSON.stringify(text).slice(1, -1)} is not a valid date-time: there is no such day or time`;
  return new HermodError('invalid_attrib', `${field} ${description}`, { fields: [{ field, description }] });
}

/** An RFC 3339 time with an offset, not in the past and within the horizon. */
export function parseSchedule(text: string, field: string, horizonMs: number, now = Date.now()): Date {
  const at = RFC3339.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) throw unschedulable(text, field);
  // A second of slack so "now" sent by a client with a slightly fast clock is not refused.
  if (at < now - 1000) throw new HermodError('invalid_attrib', `${field} is in the past`, { fields: [{ field, description: 'is in the past' }] });
  checkHorizon(at, field, horizonMs, now);
  return new Date(at);
}
