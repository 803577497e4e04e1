import { HermodError } from '../../lib/errors';

export const MAX_SCHEDULE_AHEAD_MS = 60 * 24 * 3600 * 1000;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 time with an offset, not in the past and at most 60 days ahead. */
export function parseSchedule(text: string, field: string, now = Date.now()): Date {
  if (!RFC3339.test(text)) throw new HermodError('invalid_attrib', `${field} must be an RFC 3339 date-time with an offset`, { fields: [{ field, description: 'must be an RFC 3339 date-time with an offset' }] });
  const at = Date.parse(text);
  if (Number.isNaN(at)) throw new HermodError('invalid_attrib', `${field} is not a valid date-time`, { fields: [{ field, description: 'is not a valid date-time' }] });
  // A second of slack so "now" sent by a client with a slightly fast clock is not refused.
  if (at < now - 1000) throw new HermodError('invalid_attrib', `${field} is in the past`, { fields: [{ field, description: 'is in the past' }] });
  if (at > now + MAX_SCHEDULE_AHEAD_MS) throw new HermodError('invalid_attrib', `${field} is more than 60 days ahead`, { fields: [{ field, description: 'is more than 60 days ahead' }] });
  return new Date(at);
}
