import type { Logger } from '../../lib/log';
import type { HotState } from '../ports/state';

/**
 * Opt-outs and block lists are kept in history and loaded into hot state,
 * which sends are screened against. This loads them at start, and again
 * whenever hot state has lost them (a Redis that restarted without its data,
 * or was flushed): it looks every `intervalMs`, and meanwhile hot state
 * refuses to screen (a retryable error), so no send gets through unscreened.
 */
export async function keepScreeningListsLoaded(deps: {
  state: Pick<HotState, 'screeningLoaded' | 'markScreeningLoaded'>;
  /** Puts every opt-out and block-list entry from history into hot state. */
  load: () => Promise<void>;
  log: Logger;
  intervalMs?: number;
}): Promise<{ stop(): void }> {
  const load = async (): Promise<void> => {
    await deps.load();
    await deps.state.markScreeningLoaded();
  };
  await load();
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    void (async () => {
      try {
        if (await deps.state.screeningLoaded()) return;
        deps.log.warn('hot state has lost the opt-outs and block lists (Redis restarted without its data?); loading them again');
        await load();
        deps.log.info('opt-outs and block lists loaded into hot state again');
      } catch (err) {
        // Hot state away: sends are refused meanwhile; the next look tries again.
        deps.log.debug('could not look at the opt-outs and block lists in hot state', { err });
      } finally {
        running = false;
      }
    })();
  }, deps.intervalMs ?? 1000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
