import { busBatchesFailed } from '../../lib/metrics';
import type { Bus } from '../ports/bus';

/**
 * The bus, with each batch whose handler fails counted by topic and group
 * (`hermod_bus_batches_failed_total`). Every bus hands such a batch again,
 * nothing is lost, but the records behind it in its partition wait: a batch
 * that keeps failing (history away, a bug that a record's content sets off)
 * shows as a count that keeps rising (the HermodBusBatchesFailing alert)
 * long before a backlog would.
 */
export function withFailedBatchCount(bus: Bus): Bus {
  return {
    local: bus.local,
    publish: (topic, records, options) => bus.publish(topic, records, options),
    subscribe: (topic, handler, options) =>
      bus.subscribe(
        topic,
        async (records) => {
          try {
            await handler(records);
          } catch (err) {
            busBatchesFailed.inc({ topic, group: options.group });
            throw err;
          }
        },
        options,
      ),
    lag: (topic, group) => bus.lag(topic, group),
    close: () => bus.close(),
  };
}
