import type { Logger } from './log';
import { toHermodError } from './errors';

/** Longest wait between two tries. */
const MAX_WAIT_MS = 2000;

/**
 * Runs `work` until it resolves, for work that must not be dropped (a
 * status the carrier's acceptance caused, a callback owed): waits 50 ms after
 * the first failure, doubling up to 2 s. Throws the error of a failure that
 * will not pass (not `retryable`), and any once `giveUp()` says so. Logs the
 * first failure and every twentieth as `could not <what>`, and the success
 * after them.
 */
export async function retryUntilDone(
  work: () => Promise<unknown>,
  options: { what: string; log: Logger; fields?: Record<string, unknown>; giveUp?: () => boolean },
): Promise<void> {
  const { what, log, fields } = options;
  for (let attempt = 0; ; attempt++) {
    try {
      await work();
      if (attempt > 0) log.info(`could ${what} again`, { ...fields, attempts: attempt + 1 });
      return;
    } catch (err) {
      if (!toHermodError(err).retryable || options.giveUp?.()) throw err;
      if (attempt === 0 || attempt % 20 === 0) log.warn(`could not ${what}; trying again`, { err, ...fields, attempts: attempt + 1 });
      await new Promise((r) => setTimeout(r, Math.min(MAX_WAIT_MS, 50 * 2 ** Math.min(attempt, 10))));
    }
  }
}
