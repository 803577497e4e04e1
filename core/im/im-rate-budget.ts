import type { HotState } from '../ports/state';

export interface RateBudget {
  /** Requests per second; 0: no limit. */
  limit: number;
  granted: number;
  windowEndsInMs: number;
}

/**
 * Core's side of the Intelligent Messaging rate limit: each application's
 * allowance per second (its own, set by `hermod apps set-im-rate-limit`, or
 * the service default) is counted in hot state, so every gateway, and every
 * core on a shared Redis, draws from the same one.
 *
 * A gateway asks for the requests it has waiting, or a small share (a tenth
 * of the limit) when fewer wait, and spends them without asking again, so what one
 * gateway holds and does not use in a window (lost when the window ends) is
 * small, and a burst costs one ask, not one per tenth of the limit: with a
 * slow answer, a tenth at a time would hold requests well under the limit
 * for seconds. Requests are granted first come, first served.
 */
export function createImRateBudget(deps: { state: HotState; limitOf: (applicationId: string) => Promise<number>; defaultLimit: number }) {
  return {
    async take(applicationId: string, wanted: number): Promise<RateBudget> {
      const own = await deps.limitOf(applicationId);
      const limit = own >= 0 ? own : deps.defaultLimit;
      const ask = Math.max(1, Math.min(Math.floor(wanted) || 1, limit || Number.MAX_SAFE_INTEGER));
      if (limit === 0) return { limit: 0, granted: ask, windowEndsInMs: 1000 };
      const grant = await deps.state.takeRateTokens(`im:${applicationId}`, limit, ask);
      return { limit, ...grant };
    },
  };
}

export type ImRateBudget = ReturnType<typeof createImRateBudget>;
