import type { Admin, Kafka } from 'kafkajs';
import { HermodError } from '../../lib/errors';
import { isKafkaProtocolError } from './kafka-bus-errors';

/**
 * Answers a broker gives from where the cluster stood a moment ago, which
 * kafkajs's admin gives up on at once: a partition's leader not yet in place
 * (CI's Kafka 4.4 broker answered ListOffsets for a topic just made with "not
 * the leader"), or a group's coordinator moved (a fresh three-node cluster
 * answered OffsetFetch with "not the correct coordinator").
 */
const STALE_LEADER = ['NOT_LEADER_FOR_PARTITION', 'LEADER_NOT_AVAILABLE', 'FENCED_LEADER_EPOCH', 'UNKNOWN_LEADER_EPOCH'];
const MOVED_COORDINATOR = ['NOT_COORDINATOR_FOR_GROUP', 'GROUP_COORDINATOR_NOT_AVAILABLE', 'GROUP_LOAD_IN_PROGRESS'];

/** Tries of one reading, 250 ms apart, within READ_DEADLINE_MS: a leader election takes well under a second. */
const ATTEMPTS = 8;
const PAUSE_MS = 250;
/** A reading's whole time: the backlog gauge samples every 5 s and gives up on one after 4. */
const READ_DEADLINE_MS = 3_000;
/** kafkajs's own retries within one request (its default, 5 from 300 ms, waits some 9 s on a missing leader). */
const ADMIN_RETRY = { retries: 2, initialRetryTime: 100, maxRetryTime: 500 };

export interface LagReader {
  /** Records on the topic the group has yet to read; 0 for a topic the cluster does not have. */
  lag(topic: string, group: string, topicKnown: boolean): Promise<number>;
  close(): Promise<void>;
}

interface AdminSlot {
  admin: Promise<Admin>;
  /** Readings using it now: a replaced admin is disconnected once the last of them is done. */
  users: number;
  replaced: boolean;
}

/**
 * Reads a consumer group's backlog with an admin client of its own, which it
 * replaces (so its metadata is asked afresh) when a leader has moved, and
 * asks again when a coordinator has. Readings run side by side (the gauge
 * reads every group at once): a replaced admin stays connected until the
 * readings still using it are done.
 */
export function createLagReader(kafka: Kafka): LagReader {
  let current: AdminSlot | undefined;
  let closed = false;
  const slots = new Set<AdminSlot>();

  const disconnect = (slot: AdminSlot): void => {
    slots.delete(slot);
    void slot.admin.then(
      (a) => a.disconnect().catch(() => undefined),
      () => undefined,
    );
  };
  const take = (): AdminSlot => {
    if (!current) {
      const a = kafka.admin({ retry: ADMIN_RETRY });
      const slot: AdminSlot = { admin: a.connect().then(() => a), users: 0, replaced: false };
      slot.admin.catch(() => {
        if (current === slot) current = undefined;
      });
      slots.add(slot);
      current = slot;
    }
    current.users += 1;
    return current;
  };
  const release = (slot: AdminSlot): void => {
    slot.users -= 1;
    if (slot.replaced && slot.users === 0) disconnect(slot);
  };
  const replace = (slot: AdminSlot): void => {
    if (slot.replaced) return;
    slot.replaced = true;
    if (current === slot) current = undefined;
  };

  const readOnce = async (a: Admin, topic: string, group: string, topicKnown: boolean): Promise<number> => {
    // Asking for the offsets of a missing topic would retry for seconds before it fails.
    if (!topicKnown && !(await a.listTopics()).includes(topic)) return 0;
    const ends = await a.fetchTopicOffsets(topic).catch((err: unknown) => {
      if (isKafkaProtocolError(err, 'UNKNOWN_TOPIC_OR_PARTITION')) return undefined;
      throw err;
    });
    if (!ends) return 0;
    const [committed] = await a.fetchOffsets({ groupId: group, topics: [topic] });
    const done = new Map((committed?.partitions ?? []).filter((p) => Number(p.offset) >= 0).map((p) => [p.partition, Number(p.offset)]));
    // A group with no commit at all is either unknown or subscribed and not done with anything yet:
    // both start at the beginning (fromBeginning), so everything the topic retains waits for them.
    return ends.reduce((sum, p) => sum + Math.max(0, Number(p.high) - (done.get(p.partition) ?? Number(p.low))), 0);
  };

  return {
    async lag(topic, group, topicKnown) {
      const deadline = Date.now() + READ_DEADLINE_MS;
      for (let attempt = 1; ; attempt++) {
        if (closed) throw new HermodError('unavailable', 'the Kafka bus is closed', { retryable: true });
        const slot = take();
        try {
          return await readOnce(await slot.admin, topic, group, topicKnown);
        } catch (err) {
          const staleLeader = STALE_LEADER.some((type) => isKafkaProtocolError(err, type));
          const movedCoordinator = MOVED_COORDINATOR.some((type) => isKafkaProtocolError(err, type));
          if ((!staleLeader && !movedCoordinator) || attempt >= ATTEMPTS || Date.now() + PAUSE_MS >= deadline) throw err;
          if (staleLeader) replace(slot);
        } finally {
          release(slot);
        }
        await new Promise((r) => setTimeout(r, PAUSE_MS));
      }
    },
    async close() {
      closed = true;
      current = undefined;
      await Promise.all(
        [...slots].map(async (slot) => {
          slots.delete(slot);
          await (await slot.admin.catch(() => undefined))?.disconnect().catch(() => undefined);
        }),
      );
    },
  };
}
