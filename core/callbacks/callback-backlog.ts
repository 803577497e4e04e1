import { callbacksAwaitingRetry } from '../../lib/metrics';
import { retryWindowEnd, type CallbackJob } from './callback-job';

/** How long past its retry window a callback may still be waiting (the last hold before giving up). */
const GRACE_MS = 60_000;
const SWEEP_EVERY_MS = 10_000;

/**
 * Callbacks this dispatcher holds for a retry and has not yet seen finish,
 * counted per application in hermod_callbacks_awaiting_retry. Known by event
 * id, so a callback retried many times counts once; forgotten when its retry
 * window is over, as a safety net.
 */
export function createCallbackBacklog(retryForMs: number, now: () => number = Date.now) {
  const waiting = new Map<string, { application: string; until: number }>();
  let nextSweep = now() + SWEEP_EVERY_MS;

  const forget = (eventId: string): void => {
    const entry = waiting.get(eventId);
    if (!entry) return;
    waiting.delete(eventId);
    callbacksAwaitingRetry.dec({ application: entry.application });
  };
  const sweep = (): void => {
    const t = now();
    if (t < nextSweep) return;
    nextSweep = t + SWEEP_EVERY_MS;
    for (const [eventId, entry] of waiting) if (entry.until < t) forget(eventId);
  };

  return {
    /** The job waits for a retry (a failed try, or queued behind its message's retry). */
    waiting(job: CallbackJob): void {
      sweep();
      const until = retryWindowEnd(job, retryForMs, now()) + GRACE_MS;
      const entry = waiting.get(job.eventId);
      if (entry) {
        // Its window may have started since (it waited behind another, then was tried).
        entry.until = Math.max(entry.until, until);
        return;
      }
      waiting.set(job.eventId, { application: job.applicationId, until });
      callbacksAwaitingRetry.inc({ application: job.applicationId });
    },
    /** The job is finished: delivered, refused, given up or not configured. */
    done(job: CallbackJob): void {
      forget(job.eventId);
      sweep();
    },
  };
}
