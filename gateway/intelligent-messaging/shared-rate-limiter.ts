import type { RateBudget } from '../../proto/gen/hermod/v1/im';

/** Where a gateway gets its share of an application's requests for the current second (core, over gRPC). */
export type RateBudgetSource = (applicationId: string, wanted: number) => Promise<RateBudget>;

export type RateVerdict =
  /** `limit` 0: the application has no limit. */
  { ok: true; limit: number } | { ok: false; limit: number; retryAfterSeconds: number };

export interface SharedRateLimiter {
  /** Spends one request of the application's allowance. */
  take(applicationId: string): Promise<RateVerdict>;
}

interface Allowance {
  limit: number;
  /** Requests this gateway may still accept in the window. */
  tokens: number;
  /** When the window ends, on this process's clock. */
  endsAt: number;
  /** Core had nothing left for this window. */
  exhausted: boolean;
}

// Past this many applications, allowances whose window has passed are dropped.
const SWEEP_ABOVE = 10_000;

/**
 * The gateway's side of the shared Intelligent Messaging rate limit. Core
 * counts each application's requests per one-second window in hot state
 * (shared by every gateway); this gateway takes a few at a time and spends
 * them locally, so a request costs no call to core until its share is spent.
 * Concurrent requests of one application wait for one call, not one each.
 *
 * The window's end is taken as the moment of asking plus what core said was
 * left, never later than core's own end: a share is spent only by requests
 * that arrived before that end, so it cannot spill into the next window, and
 * all gateways together accept at most the limit of requests arriving in any
 * window, however late core's answers come back.
 */
export function createSharedRateLimiter(source: RateBudgetSource, now: () => number = () => performance.now()): SharedRateLimiter {
  const allowances = new Map<string, Allowance>();
  const asking = new Map<string, Promise<void>>();

  // Requests of each application waiting for an answer from core: what to ask for.
  const waiting = new Map<string, number>();

  const ask = (applicationId: string, previous: Allowance | undefined): Promise<void> => {
    let pending = asking.get(applicationId);
    if (pending) return pending;
    const askedAt = now();
    // The requests waiting, and at least (once the limit is known) a tenth of it, for those still to come.
    const share = previous && previous.limit > 0 ? Math.ceil(previous.limit / 10) : 1;
    const wanted = Math.max(share, waiting.get(applicationId) ?? 1);
    pending = source(applicationId, wanted)
      .then((b) => {
        if (allowances.size >= SWEEP_ABOVE) for (const [id, a] of allowances) if (a.endsAt <= askedAt) allowances.delete(id);
        allowances.set(applicationId, { limit: b.limit, tokens: b.granted, endsAt: askedAt + b.windowEndsInMs, exhausted: b.limit > 0 && b.granted === 0 });
      })
      .finally(() => asking.delete(applicationId));
    asking.set(applicationId, pending);
    return pending;
  };

  return {
    async take(applicationId) {
      // A request counts in the window it arrived in: an allowance whose window ended before it
      // arrived is not for it, but one that ended while it waited for core's answer is. So an
      // answer that comes back late (a loaded core) is still spent by the requests it counted,
      // and a request refused is one whose own window core said was spent. Every answer grants
      // requests someone waiting may spend, or says the window is spent, so this loop ends.
      const arrivedAt = now();
      for (;;) {
        const a = allowances.get(applicationId);
        if (a && a.endsAt > arrivedAt) {
          if (a.limit === 0) return { ok: true, limit: 0 };
          if (a.tokens > 0) {
            a.tokens -= 1;
            return { ok: true, limit: a.limit };
          }
          if (a.exhausted) return { ok: false, limit: a.limit, retryAfterSeconds: Math.max(1, Math.ceil((a.endsAt - now()) / 1000)) };
        }
        waiting.set(applicationId, (waiting.get(applicationId) ?? 0) + 1);
        try {
          await ask(applicationId, a);
        } finally {
          const left = (waiting.get(applicationId) ?? 1) - 1;
          if (left > 0) waiting.set(applicationId, left);
          else waiting.delete(applicationId);
        }
      }
    },
  };
}
