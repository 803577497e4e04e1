import type { Bus } from '../ports/bus';
import type { Logger } from '../../lib/log';

/**
 * Waits, at most `timeoutMs`, until every group has acknowledged every record
 * of its topic (lag 0), all of them in one look: handling one topic's records
 * may publish to another (an inbound reply's `read` status). On the
 * in-process bus what was published and not yet handled goes with the process.
 */
export async function untilConsumed(
  bus: Pick<Bus, 'lag'>,
  readers: readonly { topic: string; group: string }[],
  timeoutMs: number,
  log: Logger,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lags = await Promise.all(readers.map(({ topic, group }) => bus.lag(topic, group).catch(() => 0)));
    if (lags.every((lag) => lag === 0)) return;
    if (Date.now() >= deadline) {
      log.warn('stopping with records not yet handled', { behind: readers.flatMap((r, i) => (lags[i] ? [{ ...r, lag: lags[i] }] : [])) });
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
