import type { Logger } from '../../lib/log';
import type { HotState } from '../ports/state';

/**
 * Asks hot state every `intervalMs` whether it lost data (a Redis, or a
 * Cluster master, back without it: found by this core or by another) and
 * tells `onLost`, which starts looking in history for what went with it.
 * The first look marks what hot state holds, so it is taken before this
 * returns: taken at the first tick instead, a loss within the first interval
 * (messages accepted, then a Redis back empty) went unheard. What it found is
 * `emptyAtStart`: a Redis new, or back without its data while this core was
 * down (what a loss takes went before the core could hear of it: the caller
 * looks for it in history as after a loss it hears).
 */
export async function watchHotStateLoss(deps: {
  state: Pick<HotState, 'dataLost'>;
  onLost: () => void;
  log: Logger;
  intervalMs?: number;
}): Promise<{ stop(): void; emptyAtStart: boolean }> {
  // Hot state away: the first timed look marks instead.
  const emptyAtStart = await deps.state.dataLost().catch((err: unknown) => {
    deps.log.debug('could not ask hot state whether it lost data', { err });
    return false;
  });
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    deps.state
      .dataLost()
      .then(
        (lost) => {
          if (!lost) return;
          deps.log.warn('hot state lost data (a Redis or a Cluster master back without it); keyed sends look in history again');
          deps.onLost();
        },
        // Hot state away: the next look asks again.
        (err: unknown) => deps.log.debug('could not ask hot state whether it lost data', { err }),
      )
      .finally(() => {
        running = false;
      });
  }, deps.intervalMs ?? 1000);
  timer.unref();
  return { stop: () => clearInterval(timer), emptyAtStart };
}
