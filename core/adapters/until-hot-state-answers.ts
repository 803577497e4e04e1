import { toHermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import type { HotState } from '../ports/state';

/**
 * Waits until hot state answers a read. Roles start in any order in a
 * deployment, and Redis may be restarting when core does: core waits for it,
 * as gateways do, instead of exiting (its connection logs `still waiting for
 * Redis` meanwhile); so does a worker, before it logs in to its carriers. An
 * error that waiting cannot mend (a refused password, a wrong database) ends
 * the start as before.
 */
export async function untilHotStateAnswers(state: Pick<HotState, 'getStatus'>, log: Logger, retryMs = 1000): Promise<void> {
  for (;;) {
    try {
      await state.getStatus('hermod:start');
      return;
    } catch (err) {
      const e = toHermodError(err);
      if (!e.retryable) throw err;
      log.debug('hot state does not answer yet; waiting for it', { err: e.message });
      await new Promise((r) => setTimeout(r, retryMs));
    }
  }
}
