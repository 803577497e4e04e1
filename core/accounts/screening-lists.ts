import type { Logger } from '../../lib/log';
import type { HotState } from '../ports/state';

export interface ScreeningLists {
  /**
   * A new application has no opt-outs or block list in history yet: its
   * (empty) lists are marked loaded at once, so its first send is not
   * refused while the next look comes round.
   */
  created(applicationId: string): Promise<void>;
  stop(): void;
}

/**
 * Opt-outs and block lists are kept in history and loaded into hot state,
 * which sends are screened against. This loads them at start, and again
 * whenever hot state has lost those of any scope (a Redis, or one master of
 * a Redis Cluster, that restarted without its data, or was flushed);
 * meanwhile hot state refuses to screen (a retryable error), so no send
 * gets through unscreened. Every `intervalMs` it loads the scopes that a
 * read refused since the last look (hot state's own notice, no command sent),
 * and every `sweepEveryMs` it asks hot state about every scope, for those
 * no send has needed yet: one look a second at every application's marker
 * was constant load on Redis with thousands of applications and several
 * cores. A load that hot state lost data during is not marked done, and runs again.
 */
export async function keepScreeningListsLoaded(deps: {
  state: Pick<HotState, 'screeningMissing' | 'screeningRefused' | 'beginScreeningLoad' | 'markScreeningLoaded'>;
  /** Every scope with lists: '' (the global block list) and each application's id. */
  scopes: () => Promise<string[]>;
  /** Puts every opt-out and block-list entry of these scopes from history into hot state. */
  load: (scopes: readonly string[]) => Promise<void>;
  log: Logger;
  /** Told when hot state is found to have lost the lists (a Redis back without its data): it lost whatever else it held too. */
  onLost?: () => void;
  intervalMs?: number;
  /** How often every scope's marker is looked at (default 30 s). */
  sweepEveryMs?: number;
  /** How often the scopes are listed again (applications another core created); default 30 s. */
  scopesEveryMs?: number;
}): Promise<ScreeningLists> {
  let known = new Set(await deps.scopes());
  let listedAt = Date.now();
  const scopes = async (): Promise<string[]> => {
    if (Date.now() - listedAt >= (deps.scopesEveryMs ?? 30_000)) {
      known = new Set([...known, ...(await deps.scopes())]);
      listedAt = Date.now();
    }
    return [...known];
  };
  const load = async (scopes: string[]): Promise<boolean> => {
    const token = await deps.state.beginScreeningLoad(scopes);
    await deps.load(scopes);
    return deps.state.markScreeningLoaded(scopes, token);
  };
  if (!(await load([...known]))) deps.log.warn('hot state lost data while the opt-outs and block lists were loaded; loading them again');
  let running = false;
  let sweptAt = Date.now();
  const sweepEveryMs = deps.sweepEveryMs ?? 30_000;
  /** Scopes refused whose load did not end marked (hot state away, data lost during it): looked at again next time. */
  let again = new Set<string>();
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    /** What to look at again next time if this look ends before the lists are loaded and marked. */
    let unfinished: string[] = [];
    void (async () => {
      try {
        // A scope a read refused may be one this core has not listed yet (an application another core created).
        const refused = [...new Set([...again, ...(await deps.state.screeningRefused())])];
        again = new Set();
        unfinished = refused;
        let looked = refused;
        if (Date.now() - sweptAt >= sweepEveryMs) {
          looked = [...new Set([...refused, ...(await scopes())])];
          sweptAt = Date.now();
        }
        // Asked again, so that sends refused while a load ran do not load the same lists once more.
        const missing = looked.length === 0 ? [] : await deps.state.screeningMissing(looked);
        unfinished = missing;
        if (missing.length === 0) return;
        for (const scope of missing) known.add(scope);
        deps.onLost?.();
        deps.log.warn('hot state has lost opt-outs or block lists (Redis restarted without its data?); loading them again', { scopes: missing.length });
        // Only those lost: a Cluster master that restarted empty costs the load of its own slots.
        if (await load(missing)) {
          unfinished = [];
          deps.log.info('opt-outs and block lists loaded into hot state again');
        }
      } catch (err) {
        // Hot state away: sends are refused meanwhile; the next look tries again.
        deps.log.debug('could not look at the opt-outs and block lists in hot state', { err });
      } finally {
        for (const scope of unfinished) again.add(scope);
        running = false;
      }
    })();
  }, deps.intervalMs ?? 1000);
  timer.unref();
  return {
    async created(applicationId) {
      known.add(applicationId);
      await deps.state.markScreeningLoaded([applicationId], await deps.state.beginScreeningLoad([applicationId]));
    },
    stop: () => clearInterval(timer),
  };
}
