import { randomBytes } from 'node:crypto';
import type { ChainableCommander, Redis } from 'ioredis';
import { type BusPosition, type BusRecord, valueBytes } from '../ports/bus';
import { HermodError } from '../../lib/errors';
import { fnv1a } from './memory-bus';
import type { RedisBusSettings } from './redis-bus-settings';
import { epochKey, streamKey } from './redis-bus-keys';
import { pipelineResults, unavailable } from './redis-connection';

/** Queues the bus' epoch on `pipeline` (set first if there is none), two replies: SET's, then GET's. */
export const queueEpoch = (pipeline: ChainableCommander, prefix: string): void => {
  pipeline.call('SET', epochKey(prefix), randomBytes(8).toString('hex'), 'NX');
  pipeline.call('GET', epochKey(prefix));
};

/** The epoch GET answered; none means Redis was emptied between the SET and the GET: asked again later. */
export const epochOf = (reply: unknown, what: string): string => {
  if (reply === null || reply === undefined) throw new HermodError('unavailable', `${what}: Redis was emptied meanwhile`);
  return String(reply);
};

/**
 * Publishes with one pipeline of XADDs: a record goes to the stream of
 * partition fnv1a(key) % partitions (the in-process bus' hash), fields `k`
 * (key) and `v` (value), trimmed to about maxLen entries when that is set.
 *
 * `tracked`: the bus' epoch is read first in the same pipeline, and each
 * record's position comes back. First, because the commands of one
 * connection run in order (ioredis sends again after a reconnection only
 * those not yet answered): the records are in the epoch read or in a later
 * one, never an earlier one, so a position never claims an epoch its record
 * was not in, only, at worst, one it outlived (then it is published again).
 */
export function createRedisPublisher(cmd: Redis, settings: Pick<RedisBusSettings, 'prefix' | 'partitions' | 'maxLen'>) {
  const { prefix, partitions, maxLen } = settings;
  /** Positions only when `tracked` (none otherwise). */
  return async (topic: string, records: readonly BusRecord[], tracked = false): Promise<BusPosition[]> => {
    if (records.length === 0) return [];
    const pipeline = cmd.pipeline();
    if (tracked) queueEpoch(pipeline, prefix);
    const partitionsOf: number[] = [];
    for (const record of records) {
      const partition = fnv1a(record.key) % partitions;
      partitionsOf.push(partition);
      const trim = maxLen === undefined ? [] : ['MAXLEN', '~', maxLen];
      pipeline.call('XADD', streamKey(prefix, topic, partition), ...trim, '*', 'k', record.key, 'v', valueBytes(record.value));
    }
    let replies: unknown[];
    try {
      replies = pipelineResults('publishing', await pipeline.exec());
    } catch (err) {
      throw unavailable('publishing', err);
    }
    if (!tracked) return [];
    const epoch = epochOf(replies[1], 'publishing');
    return partitionsOf.map((partition, i) => ({ epoch, partition, offset: String(replies[i + 2]) }));
  };
}
