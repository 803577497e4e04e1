import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextTryAt } from './callback-job';

const S = 1000;

describe('nextTryAt', () => {
  it("gives a message's later callback, which waited behind the first until it gave up, a whole window of tries from its own first try (callbacks trial)", () => {
    // Window 40 s; the event at 0 s; first tried at 41 s, once the callback before it gave up.
    const waited = { createdAt: 0, firstTriedAt: 41 * S, attempt: 0 };
    expect(nextTryAt(waited, 40 * S, 41 * S)).toBeGreaterThan(41 * S);
    expect(nextTryAt({ ...waited, attempt: 4 }, 40 * S, 70 * S)).toBeGreaterThan(70 * S);
    expect(nextTryAt({ ...waited, attempt: 6 }, 40 * S, 81 * S)).toBeUndefined();
  });

  it('makes the last try at the end of the window, rather than giving up when the next back-off would pass it (callbacks trial: last try at 27–30 s of 40)', () => {
    // Attempt 5 backs off 32 s ± 25 %: from 27 s that passes 40 s.
    expect(nextTryAt({ createdAt: 0, firstTriedAt: 0, attempt: 5 }, 40 * S, 27 * S)).toBe(40 * S);
    expect(nextTryAt({ createdAt: 0, firstTriedAt: 0, attempt: 6 }, 40 * S, 40 * S)).toBeUndefined();
  });

  it('counts the window from the event when a retry owed since before a restart was first tried earlier', () => {
    expect(nextTryAt({ createdAt: 10 * S, firstTriedAt: 5 * S, attempt: 0 }, 40 * S, 49 * S)).toBeLessThanOrEqual(50 * S);
  });

  it('never schedules a try after the window ends, nor before now, and gives up only once the window is over', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10 ** 9 }),
        fc.option(fc.integer({ min: 0, max: 10 ** 9 }), { nil: undefined }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 10 ** 8 }),
        fc.integer({ min: 0, max: 2 * 10 ** 9 }),
        (createdAt, firstTriedAt, attempt, retryForMs, now) => {
          const end = Math.max(createdAt, firstTriedAt ?? now) + retryForMs;
          const at = nextTryAt({ createdAt, firstTriedAt, attempt }, retryForMs, now);
          if (now >= end) expect(at).toBeUndefined();
          else {
            expect(at).toBeGreaterThan(now);
            expect(at).toBeLessThanOrEqual(end);
          }
        },
      ),
    );
  });
});
