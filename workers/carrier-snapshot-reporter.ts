import os from 'node:os';
import type { CarrierSnapshot } from '../core/ports/carrier-snapshot';
import type { HotState } from '../core/ports/state';
import type { Logger } from '../lib/log';

/**
 * A snapshot not written again within this long is dropped (the worker died
 * and was not started again). Until then the console shows its binds down
 * (not reported for 5 s): a crash must not look like a bind closed on purpose.
 */
const KEEP_UNREPORTED_MS = 2 * 60 * 1000;

/**
 * Writes what `snapshot` returns (this process's carrier binds) into hot state
 * every `everyMs`, where core reads it for the operator console. A failed
 * write is logged once and tried again at the next tick.
 */
export function startCarrierSnapshotReporter(deps: {
  state: Pick<HotState, 'putCarrierSnapshots'>;
  snapshot: () => CarrierSnapshot[];
  log: Logger;
  /** Unique per pool: `host:pid:channel`. */
  reporter?: string;
  channel: string;
  everyMs?: number;
}): { stop(): Promise<void> } {
  const everyMs = deps.everyMs ?? 1000;
  const reporter = deps.reporter ?? `${os.hostname()}:${process.pid}:${deps.channel}`;
  let warned = false;
  let writing: Promise<void> = Promise.resolve();
  const report = (): void => {
    writing = deps.state.putCarrierSnapshots(reporter, deps.snapshot(), Math.max(KEEP_UNREPORTED_MS, everyMs * 5)).then(
      () => {
        warned = false;
      },
      (err: unknown) => {
        if (!warned) deps.log.warn('could not report carrier binds', { err });
        warned = true;
      },
    );
  };
  report();
  const timer = setInterval(report, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await writing;
      // Gone at once rather than after its time to live: a bind closed on purpose is not a bind down.
      await deps.state.putCarrierSnapshots(reporter, [], 1).catch(() => undefined);
    },
  };
}
