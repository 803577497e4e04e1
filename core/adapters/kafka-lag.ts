import type { Admin, Kafka } from 'kafkajs';
import { isKafkaProtocolError } from './kafka-bus-errors';

/**
 * Answers a broker gives from where it stood a moment ago: the partition's
 * leader moved (an operator's reassignment, a broker restarted, a topic just
 * made), or the group's coordinator did (a fresh cluster electing the
 * leaders of __consumer_offsets). kafkajs's admin gives up on each at once,
 * and refreshes its metadata only when it is 5 minutes old: the backlog gauge
 * read "not the leader" for minutes after a reassignment.
 */
const STALE_LEADER = ['NOT_LEADER_FOR_PARTITION', 'LEADER_NOT_AVAILABLE', 'FENCED_LEADER_EPOCH', 'UNKNOWN_LEADER_EPOCH'];
const MOVED_COORDINATOR = ['NOT_COORDINATOR_FOR_GROUP', 'GROUP_COORDINATOR_NOT_AVAILABLE', 'GROUP_LOAD_IN_PROGRESS'];

/** Tries of one reading, 250 ms apart: a leader election takes well under a second. */
const ATTEMPTS = 8;
const PAUSE_MS = 250;

export interface LagReader {
  /** Records on the topic the group has yet to read; 0 for a topic the cluster does not have. */
  lag(topic: string, group: string, topicKnown: boolean): Promise<number>;
  close(): Promise<void>;
}

/**
 * Reads a consumer group's backlog with an admin client of its own, which it
 * replaces (so its metadata is asked afresh) when a leader has moved, and
 * asks again when a coordinator has.
 */
export function createLagReader(kafka: Kafka): LagReader {
  let admin: Promise<Admin> | undefined;
  const getAdmin = (): Promise<Admin> => {
    if (!admin) {
      const a = kafka.admin();
      admin = a.connect().then(() => a);
      admin.catch(() => (admin = undefined));
    }
    return admin;
  };
  const replaceAdmin = async (): Promise<void> => {
    const old = admin;
    admin = undefined;
    await (await old?.catch(() => undefined))?.disconnect().catch(() => undefined);
  };

  const readOnce = async (topic: string, group: string, topicKnown: boolean): Promise<number> => {
    const a = await getAdmin();
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
      for (let attempt = 1; ; attempt++) {
        try {
          return await readOnce(topic, group, topicKnown);
        } catch (err) {
          const staleLeader = STALE_LEADER.some((type) => isKafkaProtocolError(err, type));
          const movedCoordinator = MOVED_COORDINATOR.some((type) => isKafkaProtocolError(err, type));
          if ((!staleLeader && !movedCoordinator) || attempt >= ATTEMPTS) throw err;
          if (staleLeader) await replaceAdmin();
          await new Promise((r) => setTimeout(r, PAUSE_MS));
        }
      }
    },
    async close() {
      await replaceAdmin();
    },
  };
}
