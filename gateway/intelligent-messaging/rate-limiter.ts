export type RateVerdict = { ok: true } | { ok: false; retryAfterSeconds: number };

export interface RateLimiter {
  /** Spends one request of the application's allowance. */
  take(applicationId: string): RateVerdict;
}

// Past this many applications, buckets that have refilled completely (the
// same as having none) are dropped, so the map cannot grow without bound.
const SWEEP_ABOVE = 10_000;

/**
 * A token bucket per application: `limitPerSecond` requests a second, in
 * bursts of up to `limitPerSecond`. A limit of 0 means no limit.
 *
 * Buckets live in this gateway process, so with N gateways an application may
 * reach N times the limit; a limiter shared through Redis is future work.
 * `retryAfterSeconds` is when one request will be allowed again (at least 1).
 */
export function createRateLimiter(limitPerSecond: number, now: () => number = () => performance.now()): RateLimiter {
  if (!Number.isFinite(limitPerSecond) || limitPerSecond < 0) throw new RangeError(`rate limit must be 0 or more requests per second, got ${limitPerSecond}`);
  if (limitPerSecond === 0) return { take: () => ({ ok: true }) };
  // At least one request, so a fractional limit still lets a request through now and then.
  const capacity = Math.max(1, limitPerSecond);
  const buckets = new Map<string, { tokens: number; at: number }>();

  const refill = (bucket: { tokens: number; at: number }, t: number): void => {
    bucket.tokens = Math.min(capacity, bucket.tokens + ((t - bucket.at) / 1000) * limitPerSecond);
    bucket.at = t;
  };

  return {
    take(applicationId) {
      const t = now();
      let bucket = buckets.get(applicationId);
      if (!bucket) {
        if (buckets.size >= SWEEP_ABOVE) {
          for (const [id, b] of buckets) {
            refill(b, t);
            if (b.tokens >= capacity) buckets.delete(id);
          }
        }
        bucket = { tokens: capacity, at: t };
        buckets.set(applicationId, bucket);
      } else {
        refill(bucket, t);
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { ok: true };
      }
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / limitPerSecond)) };
    },
  };
}
