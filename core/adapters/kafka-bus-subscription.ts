import type { Admin, Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import type { BatchHandler, DeliveredRecord } from '../ports/bus';

/**
 * How many times the record at a group's committed offset has been handed out
 * rides in the commit's metadata. A member writes it (a "lease") before it
 * hands a batch to its handler, so whoever takes the partition over next — after
 * a close, a rebalance or a kill -9 — knows the batch was handed out before and
 * counts the redelivery. A successful batch commits past its records, and the
 * lease of the next batch in the same fetch rides on that same commit.
 */
const LEASE_PREFIX = 'hermod:handed=';
const LEASE = /^hermod:handed=(\d{1,16})(?:;upto=(\d{1,20}))?$/;
/**
 * The metadata of a commit: the hand-outs of the record at its offset, and
 * (batches side by side) the offset up to which later records were handed
 * out too, at least once each.
 */
export const leaseMetadata = (handed: number, upto?: string): string => `${LEASE_PREFIX}${handed}${upto === undefined ? '' : `;upto=${upto}`}`;
/** Hand-outs recorded in a commit's metadata; 0 for anything hermod did not write. */
export const parseLease = (metadata: string | null | undefined): number => {
  const n = Number(LEASE.exec(metadata ?? '')?.[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
};
/** Up to which offset (not included) records past the commit's were handed out, if the metadata says. */
export const parseLeaseUpto = (metadata: string | null | undefined): string | undefined => {
  const m = LEASE.exec(metadata ?? '');
  return m && parseLease(metadata) > 0 ? m[2] : undefined;
};

export interface PartitionRunnerOptions {
  topic: string;
  group: string;
  consumer: Consumer;
  admin: () => Promise<Admin>;
  handler: BatchHandler;
  maxBatch: number;
  retryBackoffMs: number;
  /** How often a waiting handler's member tells the coordinator it is alive. */
  heartbeatEveryMs: number;
  closing: () => boolean;
}

/**
 * The eachBatch of one subscription: slices a fetched batch into handler
 * batches, retries a rejected one with backoff, commits after success, and
 * keeps the member in its group while a handler (or a carrier it waits for)
 * takes its time.
 */
export interface PartitionRunner {
  eachBatch(payload: EachBatchPayload): Promise<void>;
  /** After a rebalance, with the partitions of the topic this member holds now: forget what it knew of the others. */
  reassigned(partitions: readonly number[]): void;
  /** On close: waits, at most `timeoutMs`, for batches still in the handler's hands. */
  drain(timeoutMs: number): Promise<void>;
}

export function createPartitionRunner(o: PartitionRunnerOptions): PartitionRunner {
  /**
   * Per partition: the offset this member last committed, the hand-outs recorded
   * with it, and whether the last of those has happened yet (a lease written
   * ahead, on the previous batch's commit, has not).
   */
  const committed = new Map<number, { offset: string; handed: number; handedOut: boolean }>();
  let groupLeases: Promise<Map<number, { offset: string; handed: number }>> | undefined;

  const groupLease = async (partition: number): Promise<{ offset: string; handed: number } | undefined> => {
    groupLeases ??= (async () => {
      const admin = await o.admin();
      const [offsets] = await admin.fetchOffsets({ groupId: o.group, topics: [o.topic] });
      return new Map((offsets?.partitions ?? []).map((p) => [p.partition, { offset: p.offset, handed: parseLease(p.metadata) }]));
    })();
    groupLeases.catch(() => (groupLeases = undefined));
    return (await groupLeases).get(partition);
  };

  /** Times the record at `offset` was handed out before, by this member or the partition's earlier owners. */
  const handedBefore = async (partition: number, offset: string): Promise<number> => {
    const mine = committed.get(partition);
    if (mine) return mine.offset !== offset ? 0 : mine.handedOut ? mine.handed : mine.handed - 1;
    // Another member's lease written ahead counts as a hand-out: at worst one redelivery too many, never one too few.
    const theirs = await groupLease(partition);
    return theirs?.offset === offset ? theirs.handed : 0;
  };

  /**
   * False when the group refused the commit: this member was expelled or the
   * partition moved, and whoever owns it now hands the batch out again. The
   * batch is dropped here rather than thrown to kafkajs, which would stop the
   * consumer for good on such a (non-retriable) error; the next heartbeat tells
   * kafkajs to rejoin.
   */
  const commit = async (partition: number, offset: string, handed: number, handedOut: boolean): Promise<boolean> => {
    try {
      await o.consumer.commitOffsets([{ topic: o.topic, partition, offset, metadata: handed > 0 ? leaseMetadata(handed) : null }]);
    } catch {
      committed.delete(partition);
      return false;
    }
    committed.set(partition, { offset, handed, handedOut });
    return true;
  };

  return {
    reassigned() {
      committed.clear();
      groupLeases = undefined;
    },

    // eachBatch holds its batch until it ends, and kafkajs's disconnect waits for eachBatch.
    drain: async () => undefined,

    async eachBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }) {
      const stopped = (): boolean => !isRunning() || isStale() || o.closing();
      const { partition } = batch;
      const messages = batch.messages;
      for (let start = 0; start < messages.length; start += o.maxBatch) {
        const slice = messages.slice(start, start + o.maxBatch);
        const first = slice[0]!.offset;
        let redeliveries = await handedBefore(partition, first);
        for (;;) {
          if (stopped()) return;
          const lease = committed.get(partition);
          if (lease?.offset === first && lease.handed === redeliveries + 1) lease.handedOut = true;
          else if (!(await commit(partition, first, redeliveries + 1, true))) return;
          try {
            await whileAlive(o.handler(toRecords(o.topic, partition, slice, redeliveries)), heartbeat, o.heartbeatEveryMs);
            break;
          } catch {
            redeliveries += 1;
            await whileAlive(sleep(Math.min(30_000, o.retryBackoffMs * 2 ** Math.min(redeliveries - 1, 6))), heartbeat, o.heartbeatEveryMs);
          }
        }
        const last = slice[slice.length - 1]!.offset;
        const next = (BigInt(last) + 1n).toString();
        resolveOffset(last);
        // If the next slice starts right here and will be handed out now, this commit is also its lease.
        const nextSliceHere = start + o.maxBatch < messages.length && messages[start + o.maxBatch]!.offset === next && !stopped();
        if (!(await commit(partition, next, nextSliceHere ? 1 : 0, false))) return;
        await heartbeat(); // a rebalance thrown from here makes kafkajs rejoin at once
      }
    },
  };
}

export const toRecords = (topic: string, partition: number, slice: readonly KafkaMessage[], redeliveries: number): DeliveredRecord[] =>
  slice.map((m) => ({ topic, partition, offset: m.offset, key: m.key?.toString('utf8') ?? '', value: m.value ?? Buffer.alloc(0), redeliveries }));

/**
 * Awaits `work` while heartbeating, so a handler that waits (for a carrier to
 * bind, for a slow carrier) does not cost the member its partitions. A
 * heartbeat that reports a rebalance is ignored here: the member rejoins once
 * the batch is over, and kafkajs only sends one per heartbeat interval anyway.
 */
export async function whileAlive<T>(work: Promise<T>, heartbeat: () => Promise<void>, everyMs: number): Promise<T> {
  const timer = setInterval(() => void heartbeat().catch(() => undefined), everyMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
