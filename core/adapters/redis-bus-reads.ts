import type { ChainableCommander, Redis } from 'ioredis';
import type { DeliveredRecord } from '../ports/bus';
import { HermodError } from '../../lib/errors';
import type { Member, Part } from './redis-bus-member';
import { deliveredRecord, deliveryCounts, othersHoldPending, parseStreams } from './redis-bus-replies';
import { busScripts, CLAIM_CHUNK } from './redis-bus-scripts';
import { pipelineResults, unavailable } from './redis-connection';

/**
 * The reads of one subscription: its consumer groups, taking over a
 * partition's pending entries (XAUTOCLAIM), re-reading its own with their
 * delivery counts, and reading new entries, at once or blocking.
 */
export class PartitionReads {
  constructor(
    private readonly member: Member,
    private readonly keys: readonly string[],
  ) {}

  /** Creates the group on every partition stream (at `0`, so it sees what is already there), unless it exists. */
  async ensureGroups(): Promise<void> {
    const { cmd, group } = this.member;
    const pipeline = cmd.pipeline();
    for (const key of this.keys) pipeline.call('XGROUP', 'CREATE', key, group, '0', 'MKSTREAM');
    const results = await pipeline.exec();
    if (!results) throw new HermodError('unavailable', 'creating consumer groups: the pipeline was discarded');
    for (const [err] of results) if (err && !err.message.startsWith('BUSYGROUP')) throw unavailable('creating consumer groups', err);
  }

  /**
   * Claims the pending entries of other consumers idle at least claimIdleMs;
   * true once no other consumer holds pending entries of the partition.
   */
  async claimOthers(part: Part): Promise<boolean> {
    const { cmd, group, consumer, settings } = this.member;
    let cursor = '0-0';
    do {
      const reply = (await cmd.call(
        'XAUTOCLAIM',
        part.key,
        group,
        consumer,
        String(settings.claimIdleMs),
        cursor,
        'COUNT',
        String(CLAIM_CHUNK),
        'JUSTID',
      )) as unknown[];
      cursor = String(reply[0]);
    } while (cursor !== '0-0' && !this.member.closing);
    const summary = await cmd.call('XPENDING', part.key, group);
    if (othersHoldPending(summary, consumer)) return false;
    await busScripts(cmd)
      .hermodPruneConsumers(part.key, group, consumer, settings.leaseMs)
      .catch(() => 0);
    return true;
  }

  /** Our own pending entries of the partition, oldest first, with their delivery counts. */
  async readOwnPending(part: Part): Promise<DeliveredRecord[]> {
    const { cmd, group, consumer, maxBatch, topic } = this.member;
    for (;;) {
      const pipeline = cmd.pipeline();
      pipeline.call('XPENDING', part.key, group, '-', '+', String(maxBatch), consumer);
      readGroup(pipeline)('GROUP', group, consumer, 'COUNT', String(maxBatch), 'STREAMS', part.key, '0');
      const [pending, reply] = pipelineResults('reading pending entries', await pipeline.exec());
      const deliveries = deliveryCounts(pending);
      const entries = parseStreams(reply).flatMap((s) => s.entries);
      if (entries.length === 0) return [];
      // Entries trimmed from the stream while pending come back without fields: nothing to deliver.
      const gone = entries.filter((e) => e.fields === null).map((e) => e.id);
      if (gone.length > 0) await cmd.xack(part.key, group, ...gone);
      const records = entries.flatMap((e) => (e.fields ? [deliveredRecord(topic, part.partition, e.id, e.fields, deliveries.get(e.id) ?? 1)] : []));
      if (records.length > 0) return records;
    }
  }

  /** New entries of the partition, without blocking. */
  async readNew(part: Part): Promise<DeliveredRecord[]> {
    const { cmd, group, consumer, maxBatch, topic } = this.member;
    const reply = await readGroup(cmd)('GROUP', group, consumer, 'COUNT', String(maxBatch), 'STREAMS', part.key, '>');
    return parseStreams(reply).flatMap((s) => s.entries.flatMap((e) => (e.fields ? [deliveredRecord(topic, part.partition, e.id, e.fields, 0)] : [])));
  }

  /** New entries of any of these streams, waiting up to blockMs for some on `reader` (a connection of its own). */
  readBlocking(reader: Redis, keys: readonly string[]): Promise<unknown> {
    const { group, consumer, maxBatch, settings } = this.member;
    return readGroup(reader)(
      'GROUP',
      group,
      consumer,
      'COUNT',
      String(maxBatch),
      'BLOCK',
      String(settings.blockMs),
      'STREAMS',
      ...keys,
      ...keys.map(() => '>'),
    );
  }
}

/**
 * XREADGROUP with binary replies. (ioredis' callBuffer loses the command name
 * under auto-pipelining, so the generated command is used, untyped: its
 * overloads cannot take the argument list built here.)
 */
function readGroup(client: Redis | ChainableCommander): (...args: (string | number)[]) => Promise<unknown> {
  const typed = client as unknown as { xreadgroupBuffer(...args: (string | number)[]): Promise<unknown> };
  return (...args) => typed.xreadgroupBuffer(...args);
}
