import { toHermodError } from '../../lib/errors';
import type { Bus, BusRecord, PublishOptions } from './bus';

/**
 * Publishes `records`; when the bus refuses them together as too large (a
 * broker's or topic's `message.max.bytes` below what one batch comes to), in
 * halves, each after the one before so their order holds, down to single
 * records. A single record too large is refused as before. A half published
 * before a later one is refused is published again when the caller retries
 * the whole: for records whose handling takes a second copy as the first
 * (statuses, callbacks by their event id, inbound messages by the carrier's
 * reference), never for jobs a worker would send twice.
 */
export async function publishInParts(bus: Pick<Bus, 'publish'>, topic: string, records: readonly BusRecord[], options?: PublishOptions): Promise<void> {
  try {
    await bus.publish(topic, records, options);
  } catch (err) {
    if (records.length < 2 || toHermodError(err).code !== 'body_too_large') throw err;
    const half = Math.ceil(records.length / 2);
    await publishInParts(bus, topic, records.slice(0, half), options);
    await publishInParts(bus, topic, records.slice(half), options);
  }
}
