import type { Bus } from '../ports/bus';
import type { Logger } from '../../lib/log';

/**
 * Waits, at most `timeoutMs`, until each group has acknowledged every record
 * of its topic (lag 0): on the in-process bus, what was published and not yet
 * handled goes with the process.
 */
export async function untilConsumed(
  bus: Pick<Bus, 'lag'>,
  readers: readonly { topic: string; group: string }[],
  timeoutMs: number,
  log: Logger,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const { topic, group } of readers) {
    for (;;) {
      const lag = await bus.lag(topic, group).catch(() => 0);
      if (lag === 0) break;
      if (Date.now() >= deadline) {
        log.warn('stopping with records not yet handled', { topic, group, lag });
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
