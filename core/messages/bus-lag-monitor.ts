import type { Bus } from '../ports/bus';
import { busLag, busLagUnread } from '../../lib/metrics';
import { CONSUMER_GROUPS } from '../ports/consumer-groups';
import type { Logger } from '../../lib/log';
import { within } from '../../lib/within';

/** Failed reads in a row that make an outage: one alone is a broker electing a leader, as when core starts beside new topics. */
const FAILURES_TO_WARN = 2;
/** How often a warning is repeated while an outage lasts. */
const WARN_EVERY_MS = 60_000;

export interface BusLagMonitorOptions {
  now?: () => number;
  /** Longest a read may take before it counts as failed (default 4 s, under the 5 s between samples). */
  readTimeoutMs?: number;
}

/**
 * Reads each watched group's lag into hermod_bus_lag_records, once per
 * sample(), the groups side by side. A lag that cannot be read, or is not
 * answered within `readTimeoutMs`, has no value rather than its last one (a
 * backlog frozen at 0 through a broker outage hid it), and
 * hermod_bus_lag_unread_seconds says for how long, which an alert watches.
 */
export function createBusLagMonitor(bus: Bus, log: Logger, options: BusLagMonitorOptions = {}): { sample(): Promise<void> } {
  const now = options.now ?? Date.now;
  const states = CONSUMER_GROUPS.map((watched) => ({ ...watched, lastRead: now(), failures: 0, warnedAt: undefined as number | undefined }));
  const readTimeoutMs = options.readTimeoutMs ?? 4000;
  const unreadFor = (state: { lastRead: number }): number => Math.round((now() - state.lastRead) / 1000);
  return {
    async sample(): Promise<void> {
      await Promise.all(states.map((state) => read(state)));
    },
  };

  async function read(state: (typeof states)[number]): Promise<void> {
    const { topic, group } = state;
    try {
      // Counted as failed once late: a Redis stopped or gone keeps its client's commands waiting to reconnect, unanswered.
      const lag = await within(bus.lag(topic, group), readTimeoutMs);
      if (state.warnedAt !== undefined) log.info('bus lag read again', { topic, group, unreadForSeconds: unreadFor(state) });
      Object.assign(state, { lastRead: now(), failures: 0, warnedAt: undefined });
      busLag.set({ topic, group }, lag);
      busLagUnread.set({ topic, group }, 0);
    } catch (err) {
      state.failures++;
      busLag.remove({ topic, group });
      busLagUnread.set({ topic, group }, unreadFor(state));
      const due = state.warnedAt === undefined ? state.failures >= FAILURES_TO_WARN : now() - state.warnedAt >= WARN_EVERY_MS;
      if (!due) return;
      state.warnedAt = now();
      log.warn('could not read bus lag', { err, topic, group, unreadForSeconds: unreadFor(state) });
    }
  }
}

/** Samples each watched group's lag every few seconds. */
export function startBusLagMonitor(bus: Bus, log: Logger, everyMs = 5000): { stop(): void } {
  const monitor = createBusLagMonitor(bus, log, { readTimeoutMs: Math.max(100, everyMs - 1000) });
  // One sample at a time: reads that hang are timed out, never piled up.
  let sampling = false;
  const sample = (): void => {
    if (sampling) return;
    sampling = true;
    void monitor.sample().finally(() => (sampling = false));
  };
  sample();
  const timer = setInterval(sample, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
