import type { Redis } from 'ioredis';
import { type BusRecord, valueBytes } from '../ports/bus';
import { fnv1a } from './memory-bus';
import type { RedisBusSettings } from './redis-bus-settings';
import { streamKey } from './redis-bus-keys';
import { pipelineResults, unavailable } from './redis-connection';

/**
 * Publishes with one pipeline of XADDs: a record goes to the stream of
 * partition fnv1a(key) % partitions (the in-process bus' hash), fields `k`
 * (key) and `v` (value), trimmed to about maxLen entries when that is set.
 */
export function createRedisPublisher(cmd: Redis, settings: Pick<RedisBusSettings, 'prefix' | 'partitions' | 'maxLen'>) {
  const { prefix, partitions, maxLen } = settings;
  return async (topic: string, records: readonly BusRecord[]): Promise<void> => {
    if (records.length === 0) return;
    const pipeline = cmd.pipeline();
    for (const record of records) {
      const key = streamKey(prefix, topic, fnv1a(record.key) % partitions);
      const trim = maxLen === undefined ? [] : ['MAXLEN', '~', maxLen];
      pipeline.call('XADD', key, ...trim, '*', 'k', record.key, 'v', valueBytes(record.value));
    }
    try {
      pipelineResults('publishing', await pipeline.exec());
    } catch (err) {
      throw unavailable('publishing', err);
    }
  };
}
