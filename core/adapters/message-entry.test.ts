import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MESSAGE_STATUSES } from '../domain/message-status';
import { CANCELLED, EMPTY_ENTRY, hasMark, statusOf, SUBMITTED, withMark, withStatus } from './message-entry';

const status = fc.constantFrom(...MESSAGE_STATUSES);
/** Any millisecond from 1900 to the year 4000. */
const time = fc.integer({ min: -2_208_988_800_000, max: 64_060_588_800_000 });
const mark = fc.constantFrom(SUBMITTED, CANCELLED);

describe('a message entry of in-memory hot state', () => {
  it('starts with no status and no marks', () => {
    expect(statusOf(EMPTY_ENTRY)).toBeUndefined();
    expect(statusOf(undefined)).toBeUndefined();
    expect(hasMark(EMPTY_ENTRY, SUBMITTED)).toBe(false);
    expect(hasMark(undefined, CANCELLED)).toBe(false);
  });

  it('gives back every status and time it was given, to the millisecond, whatever marks it carries', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.tuple(status, time), mark)), (steps) => {
        let entry = EMPTY_ENTRY;
        let last: { status: string; at: number } | undefined;
        const marks = new Set<number>();
        for (const step of steps) {
          if (typeof step === 'number') {
            entry = withMark(entry, step as typeof SUBMITTED);
            marks.add(step);
          } else {
            entry = withStatus(entry, step[0], step[1]);
            last = { status: step[0], at: step[1] };
          }
          expect(statusOf(entry)).toEqual(last);
          expect(hasMark(entry, SUBMITTED)).toBe(marks.has(SUBMITTED));
          expect(hasMark(entry, CANCELLED)).toBe(marks.has(CANCELLED));
          expect(Number.isSafeInteger(entry)).toBe(true);
        }
      }),
    );
  });

  it('keeps a status time of today exact (a fraction of a millisecond rounds)', () => {
    const at = Date.UTC(2026, 10, 27, 22, 30, 15, 123);
    const entry = withMark(withStatus(EMPTY_ENTRY, 'submitted', at + 0.4), SUBMITTED);
    expect(statusOf(entry)).toEqual({ status: 'submitted', at });
  });
});
