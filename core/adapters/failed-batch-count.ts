import type { Logger } from '../../lib/log';
import { busBatchesFailed } from '../../lib/metrics';
import type { Bus } from '../ports/bus';

/** A topic and group's failing batches are told in the log at most this often: each is tried again and again. */
const TELL_EVERY_MS = 60_000;

/**
 * The bus, with each batch whose handler fails counted by topic and group
 * (`hermod_bus_batches_failed_total`, there at 0 from the subscription on) and
 * told in the log once a minute with the handler's error, whichever bus it is
 * (the in-process bus and Kafka's retry without a word). Every bus hands such
 * a batch again, nothing is lost, but the records behind it in its partition
 * wait: a batch that keeps failing (history away, a bug that a record's
 * content sets off) shows as a count that keeps rising (the
 * HermodBusBatchesFailing alert) long before a backlog would.
 */
export function withFailedBatchCount(bus: Bus, log?: Logger): Bus {
  const toldAt = new Map<string, number>();
  return {
    local: bus.local,
    ...(bus.tracked ? { tracked: bus.tracked } : {}),
    publish: (topic, records, options) => bus.publish(topic, records, options),
    subscribe: (topic, handler, options) => {
      const labels = { topic, group: options.group };
      busBatchesFailed.inc(labels, 0);
      const key = `${topic}\0${options.group}`;
      return bus.subscribe(
        topic,
        async (records) => {
          try {
            await handler(records);
          } catch (err) {
            busBatchesFailed.inc(labels);
            const now = Date.now();
            if (now - (toldAt.get(key) ?? -Infinity) >= TELL_EVERY_MS) {
              toldAt.set(key, now);
              log?.warn('a batch failed in its handler; it is handed again', { ...labels, records: records.length, err });
            }
            throw err;
          }
        },
        options,
      );
    },
    lag: (topic, group) => bus.lag(topic, group),
    close: () => bus.close(),
  };
}
