import { toHermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import type { Bus } from '../ports/bus';

/**
 * Waits until the bus answers a read of `group`'s lag on `topic` (its
 * brokers reachable). A worker waits for it before it logs in to its
 * carriers: a worker whose Kafka is out of reach would hold an SMSC bind
 * that takes receipts it cannot pass on (each refused, and sent again by the
 * SMSC), where another worker's bind could take them. An error that waiting
 * cannot mend ends the start.
 */
export async function untilBusAnswers(bus: Pick<Bus, 'lag'>, topic: string, group: string, log: Logger, retryMs = 1000): Promise<void> {
  let toldAt = 0;
  for (;;) {
    try {
      await bus.lag(topic, group);
      if (toldAt) log.info('the bus answers; starting', { topic });
      return;
    } catch (err) {
      const e = toHermodError(err);
      if (!e.retryable) throw err;
      // Once a minute: the bus adapter logs each failed connection itself.
      if (Date.now() - toldAt >= 60_000) {
        toldAt = Date.now();
        log.warn('the bus does not answer yet; waiting for it before logging in to the carriers', { err: e.message });
      }
      await new Promise((r) => setTimeout(r, retryMs));
    }
  }
}
