import type { EachBatchPayload } from 'kafkajs';
import { leaseMetadata, type PartitionRunner, type PartitionRunnerOptions, parseLease, parseLeaseUpto, sleep, toRecords } from './kafka-bus-subscription';

/** One handler batch of a partition, from its hand-out until the partition's position has moved past it. */
interface Slice {
  readonly first: bigint;
  /** One past its last record. */
  readonly next: bigint;
  /** Times handed out, this one included. */
  handed: number;
  done: boolean;
}

/** A partition this member holds, with its batches in hand in offset order. */
interface Lane {
  readonly partition: number;
  readonly slices: Slice[];
  /** Where the partition's position is once every slice before the first in `slices` is done. */
  position: bigint | undefined;
  /** One past the last record handed out. */
  upto: bigint | undefined;
  /** Commits in the order made: each writes the lane as it is when it runs. */
  commits: Promise<boolean>;
  /** Wakes a fetch waiting for a batch to end. */
  ended: (() => void) | undefined;
  /** The partition went to another member (or the subscription closed): nothing more is committed for it. */
  gone: boolean;
}

/**
 * The eachBatch of a subscription with `inFlight` batches of a partition in
 * its handler's hands at once: a fetched batch is sliced and each slice
 * handed out as soon as fewer than `inFlight` are out, without waiting for
 * the earlier ones to end, and eachBatch returns once its slices are handed
 * out, so kafkajs fetches what follows. The partition's committed position
 * moves only past slices ended in a row; its metadata records the hand-outs
 * of the oldest slice out and up to where later ones were handed out, so a
 * member that takes the partition over (after a crash or a rebalance) hands
 * all of them out again, each counted as a redelivery, and nothing is lost.
 * A rebalance that leaves a partition here keeps its slices: what kafkajs
 * fetches again from the committed position and was handed out already is
 * skipped.
 */
export function createSideBySideRunner(o: PartitionRunnerOptions & { inFlight: number }): PartitionRunner {
  const lanes = new Map<number, Lane>();
  const running = new Set<Promise<void>>();

  /** Writes the lane's position, with the lease of its oldest slice out; false when the group refused it. */
  const commit = (lane: Lane): Promise<boolean> => {
    lane.commits = lane.commits.then(async () => {
      if (lane.gone) return false;
      while (lane.slices[0]?.done) lane.position = lane.slices.shift()!.next;
      const oldest = lane.slices[0];
      const offset = oldest?.first ?? lane.position;
      if (offset === undefined) return true;
      const later = oldest && lane.upto !== undefined && lane.upto > oldest.next ? String(lane.upto) : undefined;
      try {
        await o.consumer.commitOffsets([
          { topic: o.topic, partition: lane.partition, offset: String(offset), metadata: oldest ? leaseMetadata(oldest.handed, later) : null },
        ]);
        return true;
      } catch {
        // A rebalance under way, or this member expelled: the join that follows says whether the partition is still ours.
        return false;
      }
    });
    return lane.commits;
  };

  /**
   * How many times a slice starting at `first` was handed out before, by the
   * partition's last owner, as its commit says: the oldest slice it had out,
   * as often as recorded; a later one it had out, once; nothing past those.
   */
  const lastOwner = async (partition: number): Promise<(first: bigint) => number> => {
    const admin = await o.admin();
    const [offsets] = await admin.fetchOffsets({ groupId: o.group, topics: [o.topic] });
    const committed = offsets?.partitions.find((p) => p.partition === partition);
    if (!committed || !/^\d+$/.test(committed.offset)) return () => 0;
    const at = BigInt(committed.offset);
    const handed = parseLease(committed.metadata);
    const upto = parseLeaseUpto(committed.metadata);
    return (first) => (first === at ? handed : upto !== undefined && first > at && first < BigInt(upto) ? 1 : 0);
  };

  /** Wakes a fetch waiting on the lane for a slice to end. */
  const wake = (lane: Lane): void => {
    const ended = lane.ended;
    lane.ended = undefined;
    ended?.();
  };

  const handOut = (lane: Lane, slice: Slice, records: EachBatchPayload['batch']['messages']): void => {
    const work = (async () => {
      let redeliveries = slice.handed - 1;
      for (;;) {
        try {
          await o.handler(toRecords(o.topic, lane.partition, records, redeliveries));
          break;
        } catch {
          // Whoever holds the partition now hands it out again; while it is ours, so do we.
          if (lane.gone || o.closing()) return;
          redeliveries += 1;
          await sleep(Math.min(30_000, o.retryBackoffMs * 2 ** Math.min(redeliveries - 1, 6)));
          if (lane.gone || o.closing()) return;
          slice.handed = redeliveries + 1;
          // The oldest slice out carries the lease: a crash now counts this hand-out.
          if (lane.slices[0] === slice) await commit(lane);
        }
      }
      slice.done = true;
      await commit(lane);
    })()
      .catch(() => undefined)
      .finally(() => {
        running.delete(work);
        wake(lane);
      });
    running.add(work);
  };

  return {
    reassigned(partitions) {
      const held = new Set(partitions);
      for (const [partition, lane] of lanes) {
        if (held.has(partition)) {
          // Written again with the new generation: a commit refused during the rebalance is not left behind.
          void commit(lane);
          continue;
        }
        lane.gone = true;
        lanes.delete(partition);
        wake(lane);
      }
    },

    async drain(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...running]), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
      for (const lane of lanes.values()) {
        await lane.commits.catch(() => false);
        lane.gone = true;
        wake(lane);
      }
      lanes.clear();
    },

    async eachBatch(payload) {
      const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
      const stopped = (): boolean => !isRunning() || isStale() || o.closing();
      const { partition } = batch;
      let lane = lanes.get(partition);
      // A partition just taken: what its last owner had out is handed out again, counted.
      let before: (first: bigint) => number = () => 0;
      if (!lane) {
        before = await lastOwner(partition);
        lane = { partition, slices: [], position: undefined, upto: undefined, commits: Promise.resolve(true), ended: undefined, gone: false };
        lanes.set(partition, lane);
      }
      // Fetched again from the committed position after a rebalance: what is out, or ended, is not handed again.
      const upto = lane.upto;
      const messages = upto === undefined ? batch.messages : batch.messages.filter((m) => BigInt(m.offset) >= upto);
      if (messages.length < batch.messages.length) resolveOffset(batch.messages[batch.messages.length - messages.length - 1]!.offset);
      for (let start = 0; start < messages.length; start += o.maxBatch) {
        while (lane.slices.filter((s) => !s.done).length >= o.inFlight) {
          if (stopped() || lane.gone) return;
          const current = lane;
          await Promise.race([new Promise<void>((resolve) => (current.ended = resolve)), sleep(o.heartbeatEveryMs)]);
          // Alive while it waits; a rebalance thrown from here makes kafkajs rejoin at once (what is out stays out).
          await heartbeat();
        }
        if (stopped() || lane.gone) return;
        const records = messages.slice(start, start + o.maxBatch);
        const first = BigInt(records[0]!.offset);
        const next = BigInt(records[records.length - 1]!.offset) + 1n;
        const slice: Slice = { first, next, handed: before(first) + 1, done: false };
        const uptoBefore = lane.upto;
        lane.position ??= first;
        lane.slices.push(slice);
        lane.upto = next;
        // The lease first: a crash after the hand-out counts it.
        if (!(await commit(lane))) {
          // Not handed out: fetched again after the rejoin (the position stays before it).
          lane.slices.pop();
          lane.upto = uptoBefore;
          return;
        }
        resolveOffset(records[records.length - 1]!.offset);
        handOut(lane, slice, records);
      }
    },
  };
}
