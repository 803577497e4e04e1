import { describe, expect, it } from 'vitest';
import { createRateLimiter } from './rate-limiter';

/** A limiter on a clock the test moves by hand. */
function limiterAt(limit: number) {
  let ms = 0;
  const limiter = createRateLimiter(limit, () => ms);
  return { take: (app = 'app-1') => limiter.take(app), advance: (by: number) => void (ms += by) };
}

describe('createRateLimiter', () => {
  it('allows a burst of the limit, then refuses until a request has been earned back', () => {
    const l = limiterAt(2);
    expect(l.take()).toEqual({ ok: true });
    expect(l.take()).toEqual({ ok: true });
    expect(l.take()).toEqual({ ok: false, retryAfterSeconds: 1 });
    l.advance(499);
    expect(l.take().ok).toBe(false);
    l.advance(1);
    expect(l.take()).toEqual({ ok: true });
    expect(l.take().ok).toBe(false);
  });

  it('refills at the limit per second but never beyond one burst', () => {
    const l = limiterAt(5);
    for (let i = 0; i < 5; i++) l.take();
    l.advance(60_000);
    const results = Array.from({ length: 6 }, () => l.take().ok);
    expect(results).toEqual([true, true, true, true, true, false]);
  });

  it('keeps a separate allowance per application', () => {
    const l = limiterAt(1);
    expect(l.take('a').ok).toBe(true);
    expect(l.take('a').ok).toBe(false);
    expect(l.take('b').ok).toBe(true);
  });

  it('does not limit at all when the limit is 0', () => {
    const l = limiterAt(0);
    for (let i = 0; i < 1000; i++) expect(l.take().ok).toBe(true);
  });

  it('refuses a negative or non-numeric limit', () => {
    expect(() => createRateLimiter(-1)).toThrow(RangeError);
    expect(() => createRateLimiter(Number.NaN)).toThrow(RangeError);
  });
});
