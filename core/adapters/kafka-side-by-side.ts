import type { EachBatchPayload } from 'kafkajs';
import { leaseMetadata, type PartitionRunner, type PartitionRunnerOptions, parseLease, parseLeaseUpto, sleep, toRecords } from './kafka-bus-subscription';

/** One handler batch of a partition, from its hand-out until it ends (and the partition's position has moved past it). */
interface Slice {
  readonly partition: number;
  readonly first: bigint;
  /** One past its last record. */
  readonly next: bigint;
  /** Times handed out, this one included. */
  handed: number;
  done: boolean;
}

/** A partition this member holds, since its last join, with its batches out in offset order. */
interface Lane {
  readonly partition: number;
  readonly slices: Slice[];
  /** Where this lane began: the committed offset kafkajs fetched from at the join. */
  start: bigint | undefined;
  /** Where the partition's position is once every slice before the first in `slices` has ended. */
  position: bigint | undefined;
  /** One past the last record handed out. */
  upto: bigint | undefined;
  /** Hand-outs before this member's of a record, as the partition's last commit says (the last owner's batches out). */
  readonly before: (offset: bigint) => number;
  /** Commits in the order made: each writes the lane as it is when it runs. */
  commits: Promise<boolean>;
  /** Wakes a fetch waiting for a slice to end. */
  ended: (() => void) | undefined;
  /** A join since: nothing more is committed or handed out from this lane. */
  gone: boolean;
}

/** Most slices a lane keeps, ended or not, behind its oldest one out: a batch that keeps failing holds the position no further. */
const SLICES_PER_IN_FLIGHT = 16;

/**
 * The eachBatch of a subscription with `inFlight` batches of a partition in
 * its handler's hands at once: a fetched batch is sliced and each slice
 * handed out as soon as fewer than `inFlight` are out, without waiting for
 * the earlier ones to end, and eachBatch returns once its slices are handed
 * out, so kafkajs fetches what follows. The partition's committed position
 * moves only past slices ended in a row; its metadata records the hand-outs
 * of the oldest slice out and up to where later ones were handed out, so a
 * member that takes the partition over (after a crash or a rebalance) hands
 * all of them out again, each counted as a redelivery.
 *
 * At every join (kafkajs then fetches each partition again from its
 * committed position) the lanes start anew; a slice still out from before it
 * goes on until it ends, tried again as often as it fails (it may hold a job
 * whose copy in the new lane its handler let pass, because it is in hand),
 * and while it is out the new lane of its partition commits no further than
 * its first record: nothing is committed past a record not yet handled.
 */
export function createSideBySideRunner(o: PartitionRunnerOptions & { inFlight: number }): PartitionRunner {
  const lanes = new Map<number, Lane>();
  /** Slices out from lanes that a join ended, per partition. */
  const earlier = new Map<number, Set<Slice>>();
  const running = new Set<Promise<void>>();

  /** The offset past which the partition may not be committed while slices of earlier lanes that began in this lane's range are out. */
  const floor = (lane: Lane): bigint | undefined => {
    let lowest: bigint | undefined;
    for (const s of earlier.get(lane.partition) ?? []) {
      if (lane.start !== undefined && s.next <= lane.start) continue; // handled by another member meanwhile: behind this lane
      const at = lane.start !== undefined && s.first < lane.start ? lane.start : s.first;
      if (lowest === undefined || at < lowest) lowest = at;
    }
    return lowest;
  };

  /** Writes the lane's position, with the lease of its oldest slice out; false when the group refused it. */
  const commit = (lane: Lane): Promise<boolean> => {
    lane.commits = lane.commits.then(async () => {
      if (lane.gone) return false;
      while (lane.slices[0]?.done) lane.position = lane.slices.shift()!.next;
      const oldest = lane.slices[0];
      let offset = oldest?.first ?? lane.position;
      if (offset === undefined) return true;
      let handed = oldest?.handed ?? 0;
      const held = floor(lane);
      if (held !== undefined && held < offset) {
        offset = held;
        handed = 1;
      }
      const later = handed > 0 && lane.upto !== undefined && lane.upto > offset + 1n ? String(lane.upto) : undefined;
      try {
        await o.consumer.commitOffsets([
          { topic: o.topic, partition: lane.partition, offset: String(offset), metadata: handed > 0 ? leaseMetadata(handed, later) : null },
        ]);
        return true;
      } catch {
        // A rebalance under way, or this member expelled: the join that follows starts the lanes anew.
        return false;
      }
    });
    return lane.commits;
  };

  /**
   * How many times a record was handed out before, by the partition's last
   * owner, as its commit says: the one at the committed offset as often as
   * recorded; a later one it had out, once; nothing past those.
   */
  const lastOwner = async (partition: number): Promise<(offset: bigint) => number> => {
    const admin = await o.admin();
    const [offsets] = await admin.fetchOffsets({ groupId: o.group, topics: [o.topic] });
    const committed = offsets?.partitions.find((p) => p.partition === partition);
    if (!committed || !/^\d+$/.test(committed.offset)) return () => 0;
    const at = BigInt(committed.offset);
    const handed = parseLease(committed.metadata);
    const upto = parseLeaseUpto(committed.metadata);
    return (offset) => (offset === at ? handed : upto !== undefined && offset > at && offset < BigInt(upto) ? 1 : 0);
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
          // Tried again even once its lane is gone: a copy handed out since may have been let pass as in hand.
          if (o.closing()) return;
          redeliveries += 1;
          await sleep(Math.min(30_000, o.retryBackoffMs * 2 ** Math.min(redeliveries - 1, 6)));
          if (o.closing()) return;
          slice.handed = redeliveries + 1;
          // The oldest slice out carries the lease: a crash now counts this hand-out.
          if (lane.slices[0] === slice) await commit(lane);
        }
      }
      slice.done = true;
      if (!lane.gone) await commit(lane);
    })()
      .catch(() => undefined)
      .finally(() => {
        running.delete(work);
        wake(lane);
        const left = earlier.get(slice.partition);
        if (left?.delete(slice)) {
          if (left.size === 0) earlier.delete(slice.partition);
          // The new lane of its partition may commit further now.
          const current = lanes.get(slice.partition);
          if (current) void commit(current);
        }
      });
    running.add(work);
  };

  /** Ends every lane: its slices still out go on, holding back the commits of their partitions' next lanes. */
  const endLanes = (): void => {
    for (const lane of lanes.values()) {
      lane.gone = true;
      for (const s of lane.slices) {
        if (s.done) continue;
        const set = earlier.get(s.partition) ?? new Set<Slice>();
        set.add(s);
        earlier.set(s.partition, set);
      }
      wake(lane);
    }
    lanes.clear();
  };

  return {
    reassigned() {
      // kafkajs fetches every partition it assigns again from its committed position, which another member may
      // have moved meanwhile (a generation this member missed): each starts anew from there.
      endLanes();
    },

    async drain(timeoutMs) {
      // Nothing more is fetched while what is out ends (kafkajs would fetch the same records again and again).
      (o.consumer as Partial<Pick<typeof o.consumer, 'pause'>>).pause?.([{ topic: o.topic }]);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...running]), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
      await Promise.all([...lanes.values()].map((lane) => lane.commits.catch(() => false)));
      endLanes();
    },

    async eachBatch(payload) {
      const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
      const stopped = (): boolean => !isRunning() || isStale() || o.closing();
      const { partition } = batch;
      let lane = lanes.get(partition);
      if (!lane) {
        const before = await lastOwner(partition);
        if (stopped() || lanes.has(partition)) return; // a join meanwhile: kafkajs fetches again
        lane = {
          partition,
          slices: [],
          start: undefined,
          position: undefined,
          upto: undefined,
          before,
          commits: Promise.resolve(true),
          ended: undefined,
          gone: false,
        };
        lanes.set(partition, lane);
      }
      // What this lane handed out already (fetched twice) is not handed again.
      const upto = lane.upto;
      const messages = upto === undefined ? batch.messages : batch.messages.filter((m) => BigInt(m.offset) >= upto);
      if (messages.length < batch.messages.length) resolveOffset(batch.messages[batch.messages.length - messages.length - 1]!.offset);
      for (let start = 0; start < messages.length; start += o.maxBatch) {
        const current = lane;
        while (current.slices.filter((s) => !s.done).length >= o.inFlight || current.slices.length >= o.inFlight * SLICES_PER_IN_FLIGHT) {
          if (stopped() || current.gone) return;
          await Promise.race([new Promise<void>((resolve) => (current.ended = resolve)), sleep(o.heartbeatEveryMs)]);
          // Alive while it waits; a rebalance thrown from here makes kafkajs rejoin at once (what is out stays out).
          await heartbeat();
        }
        if (stopped() || current.gone) return;
        const records = messages.slice(start, start + o.maxBatch);
        const first = BigInt(records[0]!.offset);
        const next = BigInt(records[records.length - 1]!.offset) + 1n;
        const slice: Slice = { partition, first, next, handed: current.before(first) + 1, done: false };
        const uptoBefore = current.upto;
        current.start ??= first;
        current.position ??= first;
        current.slices.push(slice);
        current.upto = next;
        // The lease first: a crash after the hand-out counts it.
        if (!(await commit(current))) {
          // Not handed out: fetched again after the rejoin (the position stays before it).
          current.slices.pop();
          current.upto = uptoBefore;
          return;
        }
        resolveOffset(records[records.length - 1]!.offset);
        handOut(current, slice, records);
      }
    },
  };
}
