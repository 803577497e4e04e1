import { describe, expect, it } from 'vitest';
import { createFailedAuthLimiter, isRefusal, type Attempt, type Refusal } from './failed-auth-limiter';

const LIMITS = { perName: 3, perAddress: 10, backoffMs: 10_000, maxBackoffMs: 60_000 };

function limiterAt(start = 0) {
  let t = start;
  const limiter = createFailedAuthLimiter(LIMITS, () => t);
  const attempt = (address: string, name: string | undefined, ok: boolean): Refusal | Attempt => {
    const a = limiter.begin(address, name);
    if (!isRefusal(a)) a.ended(ok);
    return a;
  };
  return { limiter, attempt, advance: (ms: number) => (t += ms) };
}

const refused = (a: Refusal | Attempt): number | undefined => (isRefusal(a) ? a.retryAfterMs : undefined);

describe('the failed authentication limiter', () => {
  it('lets an application name fail a few times, then refuses it for a back-off that doubles with each failure after, up to the cap', () => {
    const { attempt, advance } = limiterAt();
    for (let i = 0; i < 3; i++) expect(refused(attempt('192.0.2.1', 'kāinga-ā-iwi', false))).toBeUndefined();
    // The third failure started a back-off of 10 s.
    expect(refused(attempt('192.0.2.1', 'kāinga-ā-iwi', true))).toBe(10_000);
    advance(10_000);
    expect(refused(attempt('192.0.2.1', 'kāinga-ā-iwi', false))).toBeUndefined();
    expect(refused(attempt('192.0.2.1', 'kāinga-ā-iwi', false))).toBe(20_000);
    for (const wait of [20_000, 40_000, 60_000, 60_000]) {
      advance(wait);
      attempt('192.0.2.1', 'kāinga-ā-iwi', false);
      expect(refused(attempt('192.0.2.1', 'kāinga-ā-iwi', false))).toBe(Math.min(wait * 2, 60_000));
    }
  });

  it('refuses the name from the address that failed during its back-off, but not from another address (nobody locks an application out by knowing its name), nor another name from that address', () => {
    const { attempt } = limiterAt();
    for (let i = 0; i < 3; i++) attempt('192.0.2.1', 'kāinga-ā-iwi', false);
    expect(refused(attempt('192.0.2.1', 'kāinga-ā-iwi', true))).toBeGreaterThan(0);
    expect(refused(attempt('198.51.100.7', 'kāinga-ā-iwi', true))).toBeUndefined();
    expect(refused(attempt('192.0.2.1', 'tōtara-🌳', true))).toBeUndefined();
  });

  it('lets many first logins of different applications from one address through at once (a gateway restarted behind a load balancer)', () => {
    const { limiter } = limiterAt();
    const outcomes = Array.from({ length: 25 }, (_, i) => limiter.begin('10.0.0.1', `tono-${i}-快`));
    expect(outcomes.filter(isRefusal)).toEqual([]);
  });

  it('refuses an address that fails for many names, whatever name it tries next', () => {
    const { attempt } = limiterAt();
    for (let i = 0; i < 10; i++) attempt('192.0.2.1', `ingoa-${i}-💥`, false);
    expect(refused(attempt('192.0.2.1', 'tōtara-🌳', true))).toBe(10_000);
    expect(refused(attempt('192.0.2.1', undefined, true))).toBe(10_000);
    expect(refused(attempt('198.51.100.7', 'tōtara-🌳', true))).toBeUndefined();
  });

  it('counts checks in flight, so a burst of parallel guesses gets no more checks than the allowance', () => {
    const { limiter } = limiterAt();
    const outcomes = Array.from({ length: 40 }, () => limiter.begin('192.0.2.1', 'kāinga-ā-iwi'));
    expect(outcomes.filter((o) => !isRefusal(o))).toHaveLength(3);
    expect(outcomes.filter(isRefusal).every((o) => o.retryAfterMs === 1000)).toBe(true);
  });

  it('forgets the failures of a name whose right password is given before its back-off', () => {
    const { attempt } = limiterAt();
    for (let i = 0; i < 2; i++) attempt('192.0.2.1', 'kāinga-ā-iwi', false);
    expect(refused(attempt('192.0.2.1', 'kāinga-ā-iwi', true))).toBeUndefined();
    for (let i = 0; i < 3; i++) expect(refused(attempt('192.0.2.1', 'kāinga-ā-iwi', false))).toBeUndefined();
  });

  it('forgets a name that has had no failure for the longest back-off since its back-off ended', () => {
    const { attempt, advance } = limiterAt();
    for (let i = 0; i < 3; i++) attempt('192.0.2.1', 'kāinga-ā-iwi', false);
    advance(10_000 + 60_001);
    for (let i = 0; i < 3; i++) expect(refused(attempt('192.0.2.1', 'kāinga-ā-iwi', false))).toBeUndefined();
    expect(refused(attempt('192.0.2.1', 'kāinga-ā-iwi', false))).toBe(10_000);
  });

  it('does not count a check that got no answer (core out of reach) as a failure', () => {
    const { limiter } = limiterAt();
    for (let i = 0; i < 10; i++) {
      const a = limiter.begin('192.0.2.1', 'kāinga-ā-iwi');
      expect(isRefusal(a)).toBe(false);
      (a as Attempt).ended(undefined);
    }
    expect(limiter.size).toBe(0);
  });

  it('keeps at most ten thousand names and ten thousand addresses, however many are tried', () => {
    const { limiter, attempt } = limiterAt();
    for (let i = 0; i < 25_000; i++) attempt(`2001:db8::${i.toString(16)}`, `ingoa-${i}-💥`, false);
    expect(limiter.size).toBe(20_000);
  });
});
