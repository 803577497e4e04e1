import type { Logger } from '../../lib/log';
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

// Answers from core that came after their window ended, in a row for one request, before it is told core is unavailable.
const LATE_ANSWERS = 3;

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
 * left, never later than core's own end: a share cannot spill into the next
 * window, so all gateways together accept at most the limit in any window.
 * A gateway asks for as many as it has waiting (at least a tenth of the
 * limit), so a burst costs one more ask, not one per tenth of the limit: each
 * ask is a chance for a slow answer to miss its window.
 */
export function createSharedRateLimiter(
  source: RateBudgetSource,
  now: () => number = () => performance.now(),
  /** Told each time a request is accepted from a share that came back after its second (core slow to count). */
  onLate?: () => void,
): SharedRateLimiter {
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
      // Every answer from core either grants requests (someone spends them), says the window is
      // spent (everyone waiting is refused) or comes after its window ended: its grant is counted
      // in a second that is over and is not spent (that would spill into the next), and a new ask
      // starts. Answers that keep coming too late mean core is slow to count (a loaded machine): that
      // is not the application's fault, so after a few the last late share is spent after all. Core
      // counted those requests, each once, in the second it answered: what is accepted over time stays
      // within the limit, only a second later than counted (a trial's burst under its limit on a
      // loaded machine was otherwise answered 500 for a quarter of its requests).
      let late = 0;
      for (;;) {
        const t = now();
        const a = allowances.get(applicationId);
        if (a && a.endsAt > t) {
          if (a.limit === 0) return { ok: true, limit: 0 };
          if (a.tokens > 0) {
            a.tokens -= 1;
            return { ok: true, limit: a.limit };
          }
          if (a.exhausted) return { ok: false, limit: a.limit, retryAfterSeconds: Math.max(1, Math.ceil((a.endsAt - t) / 1000)) };
        } else if (a && ++late > LATE_ANSWERS) {
          if (a.limit === 0) return { ok: true, limit: 0 };
          if (a.tokens > 0) {
            a.tokens -= 1;
            onLate?.();
            return { ok: true, limit: a.limit };
          }
          // Nothing left of what core granted (none, or others here spent it): over the limit, as core counts.
          return { ok: false, limit: a.limit, retryAfterSeconds: 1 };
        }
        waiting.set(applicationId, (waiting.get(applicationId) ?? 0) + 1);
        try {
          await ask(applicationId, a);
        } finally {
          const left = (waiting.get(applicationId) ?? 1) - 1;
          if (left > 0) waiting.set(applicationId, left);
          else waiting.delete(applicationId);
        }
        // Core's answer to this very ask says the application has no limit: true in any second, however late it came.
        if (allowances.get(applicationId)?.limit === 0) return { ok: true, limit: 0 };
      }
    },
  };
}

/**
 * Logs requests accepted from late shares (see take): one line at the first,
 * then at most one a minute with how many since, so an operator learns core
 * is slow to count without a line a request.
 */
export function lateRateShares(log: Logger, everyMs = 60_000, now: () => number = Date.now): () => void {
  let since = 0;
  let lastAt = -Infinity;
  return () => {
    since += 1;
    const t = now();
    if (t - lastAt < everyMs) return;
    log.warn('core answered the Intelligent Messaging rate limit after its second ended; requests accepted from the late shares', { requests: since });
    since = 0;
    lastAt = t;
  };
}
