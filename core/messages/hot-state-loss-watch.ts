import type { Logger } from '../../lib/log';
import type { HotState } from '../ports/state';

/**
 * Asks hot state every `intervalMs` whether it lost data (a Redis, or a
 * Cluster master, back without it: found by this core or by another) and
 * tells `onLost`, which starts looking in history for what went with it.
 * The first look only marks what hot state holds, so it is taken before this
 * returns: taken at the first tick instead, a loss within the first interval
 * (messages accepted, then a Redis back empty) went unheard.
 */
export async function watchHotStateLoss(deps: {
  state: Pick<HotState, 'dataLost'>;
  onLost: () => void;
  log: Logger;
  intervalMs?: number;
}): Promise<{ stop(): void }> {
  // Hot state away: the first timed look marks instead.
  await deps.state.dataLost().catch((err: unknown) => deps.log.debug('could not ask hot state whether it lost data', { err }));
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
  return { stop: () => clearInterval(timer) };
}
