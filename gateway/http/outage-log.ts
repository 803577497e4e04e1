import type { Logger } from '../../lib/log';

export interface OutageLog {
  /**
   * Told the status of every answer an interface gave, and `unavailable`, the
   * message of the error that made it an outage (core, the bus or hot state
   * out of reach or too slow) where the status alone does not say so:
   * Intelligent Messaging answers those 500, as its interface declares no 503.
   */
  answered(status: number, unavailable?: string): void;
}

/**
 * What an operator tailing a gateway's log sees while core (or the bus, or a
 * hot-state shard) is out of reach: a line when the gateway starts answering
 * 503/504, then one every `everyMs` with how many it answered so, and one
 * when it answers again. A core killed under load cost thousands of 503s and
 * not a line in the gateway's log (a trial).
 */
export function createOutageLog(log: Logger, options: { everyMs?: number; now?: () => number } = {}): OutageLog {
  const everyMs = options.everyMs ?? 10_000;
  const now = options.now ?? Date.now;
  let since: number | undefined;
  let lastLine = Number.NEGATIVE_INFINITY;
  let unsaid = 0;
  let total = 0;
  return {
    answered(status, unavailable) {
      if (status === 503 || status === 504 || unavailable !== undefined) {
        const t = now();
        since ??= t;
        unsaid++;
        total++;
        if (t - lastLine < everyMs) return;
        log.warn('answering requests as unavailable: core, the bus or hot state is out of reach', {
          status,
          answers: unsaid,
          forMs: t - since,
          ...(unavailable ? { reason: unavailable } : {}),
        });
        lastLine = t;
        unsaid = 0;
        return;
      }
      // Only an answer core took part in ends it: a 400 or 401 the gateway gives on its own says nothing of core.
      if (since === undefined || status >= 400) return;
      log.info('answering requests again', { unavailableAnswers: total, forMs: now() - since });
      since = undefined;
      lastLine = Number.NEGATIVE_INFINITY;
      unsaid = 0;
      total = 0;
    },
  };
}
