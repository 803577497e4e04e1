import type { Redis } from 'ioredis';
import type { AcknowledgedPositions, BusPosition } from '../ports/bus';
import { streamKey } from './redis-bus-keys';
import { epochOf, queueEpoch } from './redis-bus-publish';
import { compareIds, groupInfo } from './redis-bus-replies';
import type { RedisBusSettings } from './redis-bus-settings';
import { unavailable } from './redis-connection';

/**
 * How far `group` has acknowledged each partition of `topic`: an entry is
 * acknowledged when it is at or below the group's last-delivered-id and
 * below its oldest pending entry (XINFO GROUPS, then the XPENDING summary: an
 * entry read meanwhile is above the first; one acknowledged never becomes
 * pending again). A stream or group that does not exist yet has acknowledged
 * nothing.
 *
 * The epoch is read last in the same pipeline: the commands of a connection
 * run in order, so when it is the epoch of a position, the replies before it
 * came from the Redis of that epoch (a Redis back empty meanwhile answers the
 * GET with another). Else a group reading the streams of a new epoch, whose
 * ids come from the clock and so lie above the old ones, would seem to have
 * acknowledged the records that were lost.
 */
export function createRedisAcknowledged(cmd: Redis, settings: Pick<RedisBusSettings, 'prefix' | 'partitions'>) {
  const { prefix, partitions } = settings;
  return async (topic: string, group: string): Promise<AcknowledgedPositions> => {
    const pipeline = cmd.pipeline();
    for (let p = 0; p < partitions; p++) {
      const key = streamKey(prefix, topic, p);
      pipeline.call('XINFO', 'GROUPS', key);
      pipeline.call('XPENDING', key, group);
    }
    queueEpoch(pipeline, prefix);
    const results = await pipeline.exec().catch((err: unknown) => {
      throw unavailable('reading what a group acknowledged', err);
    });
    if (!results) throw unavailable('reading what a group acknowledged', 'the pipeline was discarded');
    const [epochErr, epochReply] = results[2 * partitions + 1]!;
    if (epochErr) throw unavailable('reading what a group acknowledged', epochErr);
    const epoch = epochOf(epochReply, 'reading what a group acknowledged');
    /** Per partition: the last id delivered and the oldest pending one (undefined: none pending); none, nothing acknowledged. */
    const bounds: ({ delivered: string; oldestPending: string | undefined } | undefined)[] = [];
    for (let p = 0; p < partitions; p++) {
      const [groupsErr, groups] = results[2 * p]!;
      const [pendingErr, summary] = results[2 * p + 1]!;
      // No such stream or group yet (ERR no such key, NOGROUP): nothing acknowledged.
      const info = groupsErr || pendingErr ? undefined : groupInfo(groups, group);
      const delivered = info?.get('last-delivered-id');
      if (delivered === undefined || delivered === null) continue;
      const first = Number((summary as unknown[])[0] ?? 0) > 0 ? (summary as unknown[])[1] : undefined;
      bounds[p] = { delivered: String(delivered), oldestPending: first === undefined || first === null ? undefined : String(first) };
    }
    return {
      epoch,
      covers(position: BusPosition): boolean {
        const bound = position.epoch === epoch ? bounds[position.partition] : undefined;
        if (!bound) return false;
        return compareIds(position.offset, bound.delivered) <= 0 && (bound.oldestPending === undefined || compareIds(position.offset, bound.oldestPending) < 0);
      },
    };
  };
}
