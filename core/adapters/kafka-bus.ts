import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, Partitioners, type Admin, type Consumer, type Producer } from 'kafkajs';
import { HermodError } from '../../lib/errors';
import { createLogger, type Logger } from '../../lib/log';
import { kafkaLogCreator } from './kafka-log';
import type { BatchHandler, Bus, BusRecord, SubscribeOptions, Subscription } from '../ports/bus';
import { isKafkaProtocolError, toKafkaBusError } from './kafka-bus-errors';
import { createPartitionedPublisher } from './kafka-bus-publish';
import { createPartitionRunner } from './kafka-bus-subscription';
import { createSideBySideRunner } from './kafka-side-by-side';
import { createLagReader } from './kafka-lag';
import { watchConsumerCrashes } from './kafka-crash-watch';

export interface KafkaBusOptions {
  brokers: string[];
  clientId?: string;
  /** Partitions of the topics this bus creates (default 16). */
  partitions?: number;
  replicationFactor?: number;
  /** Create missing topics (default true). Off where an operator owns the topics. */
  createTopics?: boolean;
  /** How long a failed batch waits before it is handed to the handler again. */
  retryBackoffMs?: number;
  /** A member that has not heartbeated for this long loses its partitions (default 30 s). */
  sessionTimeoutMs?: number;
  /**
   * Longest subscribe() waits for the member to join its group before it returns anyway (default 2 s): after a
   * kill -9 a join waits for the dead member's session to run out, and core's five subscriptions one after the
   * other waited 10 s each, so a restarted core listened 30 s after the kill instead of 11 s.
   */
  joinWaitMs?: number;
  /** Where kafkajs's own log goes (kafka-log.ts); default a logger of its own. */
  log?: Logger;
}

/**
 * The bus on Kafka. One topic per channel; records keyed by destination so
 * the default (murmur2) partitioner keeps one destination in order; one
 * consumer group per worker pool, whose members handle their partitions
 * concurrently. The producer is idempotent and waits for all in-sync
 * replicas; offsets are committed by hand only after the handler resolved, so
 * a crash means redelivery, never loss. Every kafkajs failure leaves here as a
 * HermodError.
 */
export function createKafkaBus(options: KafkaBusOptions): Bus {
  const log = options.log ?? createLogger({ component: 'kafka-bus' });
  const kafka = new Kafka({
    clientId: options.clientId ?? 'hermod',
    brokers: options.brokers,
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(log),
  });
  const partitions = options.partitions ?? 16;
  const createTopics = options.createTopics ?? true;
  const retryBackoffMs = options.retryBackoffMs ?? 500;
  const sessionTimeout = options.sessionTimeoutMs ?? 30_000;
  // Members learn of a rebalance from a heartbeat's answer: a short interval makes scaling out quick.
  const heartbeatInterval = Math.max(100, Math.min(1_000, Math.floor(sessionTimeout / 6)));
  const joinWaitMs = options.joinWaitMs ?? 2_000;
  let producer: Promise<Producer> | undefined;
  let admin: Promise<Admin> | undefined;
  const knownTopics = new Map<string, Promise<void>>();
  const consumers = new Set<Consumer>();
  /** Set once close() is called: a subscribe waiting for the cluster gives up. */
  let closed = false;

  const connected = <T extends { connect(): Promise<void> }>(client: T): Promise<T> => client.connect().then(() => client);
  const getAdmin = (): Promise<Admin> => {
    admin ??= connected(kafka.admin());
    admin.catch(() => (admin = undefined));
    return admin;
  };
  const getProducer = (): Promise<Producer> => {
    // Idempotence needs one request in flight per broker to keep sequence numbers gapless.
    // Partitions are chosen in kafka-bus-publish.ts (murmur2); naming the partitioner also spares the log kafkajs's v2 notice.
    producer ??= connected(
      kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner }),
    );
    producer.catch(() => (producer = undefined));
    return producer;
  };

  const send = createPartitionedPublisher(getProducer, getAdmin);
  const lagReader = createLagReader(kafka);

  const ensureTopic = (topic: string): Promise<void> => {
    if (!createTopics) return Promise.resolve();
    let known = knownTopics.get(topic);
    if (!known) {
      known = (async () => {
        const a = await getAdmin();
        await untilKnown(() =>
          a.createTopics({
            waitForLeaders: true,
            topics: [{ topic, numPartitions: partitions, replicationFactor: options.replicationFactor ?? -1 }],
          }),
        );
      })();
      known.catch(() => knownTopics.delete(topic));
      knownTopics.set(topic, known);
    }
    return known;
  };

  return {
    async publish(topic: string, records: readonly BusRecord[]): Promise<void> {
      if (records.length === 0) return;
      try {
        await ensureTopic(topic);
        await send(topic, records);
      } catch (err) {
        throw toKafkaBusError(err, `publishing to ${topic}`);
      }
    },

    async subscribe(topic: string, handler: BatchHandler, subscribe: SubscribeOptions): Promise<Subscription> {
      const consumer = kafka.consumer({
        groupId: subscribe.group,
        allowAutoTopicCreation: false,
        sessionTimeout,
        heartbeatInterval,
        maxWaitTimeInMs: FETCH_MAX_WAIT_MS,
      });
      let closing = false;
      const inFlight = Math.max(1, Math.trunc(subscribe.inFlight ?? 1));
      const runnerOptions = {
        topic,
        group: subscribe.group,
        consumer,
        admin: getAdmin,
        handler,
        maxBatch: subscribe.maxBatch ?? 256,
        retryBackoffMs,
        heartbeatEveryMs: heartbeatInterval,
        closing: () => closing,
      };
      const runner = inFlight > 1 ? createSideBySideRunner({ ...runnerOptions, inFlight }) : createPartitionRunner(runnerOptions);
      const crashes = watchConsumerCrashes(log, { group: subscribe.group, topic });
      consumer.on(consumer.events.GROUP_JOIN, (e) => {
        crashes.joined();
        runner.reassigned(e.payload.memberAssignment[topic] ?? []);
      });
      consumer.on(consumer.events.CRASH, (e) => crashes.crashed(e.payload.error));
      // A cluster away (a core started before its broker, a broker restarting) is waited for, as Redis is: tried
      // again, and said so every half minute, until it answers or the bus closes. Anything else fails the subscribe.
      const doing = `subscribing group ${subscribe.group} to ${topic}`;
      let awaySince: number | undefined;
      let toldAt = 0;
      for (let attempt = 1; ; attempt++) {
        try {
          await ensureTopic(topic);
          consumers.add(consumer);
          await consumer.connect();
          // kafkajs takes the topic back out of its targets on that error, so subscribing again is clean.
          await untilKnown(() => consumer.subscribe({ topic, fromBeginning: true }), createTopics ? TOPIC_PROPAGATION_MS : 0);
          if (awaySince !== undefined) log.info('Kafka answers; subscribed', { group: subscribe.group, topic, waitedMs: Date.now() - awaySince });
          // Closed while this waited for the cluster: no member starts after the close.
          if (closed) throw new HermodError('unavailable', `Kafka ${doing}: the bus was closed meanwhile`);
          break;
        } catch (err) {
          consumers.delete(consumer);
          await consumer.disconnect().catch(() => undefined);
          const e = toKafkaBusError(err, doing);
          if (e.code !== 'unavailable' || closed) throw e;
          awaySince ??= Date.now();
          if (Date.now() - toldAt >= AWAY_TOLD_EVERY_MS) {
            toldAt = Date.now();
            log.warn('Kafka is not reachable; subscribing again until it is', { group: subscribe.group, topic, err: e, awayMs: Date.now() - awaySince });
          }
          await new Promise((r) => setTimeout(r, Math.min(5_000, retryBackoffMs * 2 ** Math.min(attempt, 6))));
          if (closed) throw e;
        }
      }
      // run() resolves once the member has joined. A join waits until every member of the group has
      // rejoined, which a member busy in a long handler does only when it is done (or is expelled after
      // the rebalance timeout), so subscribe() waits for the join only so long. Nothing is missed by not
      // waiting: a new group starts at the beginning, an existing one at its commits; kafkajs goes on
      // joining, and retries a failed join, by itself.
      const running = consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        // One eachBatch per partition at a time (order; with inFlight it returns once its batches are handed out), the partitions of a member side by side.
        partitionsConsumedConcurrently: Math.max(1, partitions),
        eachBatch: (payload) => runner.eachBatch(payload),
      });
      running.catch(() => undefined); // kafkajs logs its own crash
      let waited: NodeJS.Timeout | undefined;
      try {
        await Promise.race([running, new Promise((r) => (waited = setTimeout(r, joinWaitMs)))]);
      } catch (err) {
        consumers.delete(consumer);
        await consumer.disconnect().catch(() => undefined);
        throw toKafkaBusError(err, `subscribing group ${subscribe.group} to ${topic}`);
      } finally {
        clearTimeout(waited);
      }
      return {
        async close() {
          closing = true;
          // Batches still in hand end (and commit) first, for as long as a close may take.
          await runner.drain(CLOSE_DRAIN_MS);
          consumers.delete(consumer);
          await consumer.disconnect();
        },
      };
    },

    async lag(topic: string, group: string): Promise<number> {
      try {
        return await lagReader.lag(topic, group, knownTopics.has(topic));
      } catch (err) {
        throw toKafkaBusError(err, `reading the lag of group ${group} on ${topic}`);
      }
    },

    async close(): Promise<void> {
      closed = true;
      try {
        await Promise.all([...consumers].map((c) => c.disconnect()));
        consumers.clear();
        if (producer) await (await producer).disconnect();
        if (admin) await (await admin).disconnect();
      } catch (err) {
        throw toKafkaBusError(err, 'closing the bus');
      } finally {
        await lagReader.close();
      }
    },
  };
}

/** Longest a closing subscription waits for the batches side by side in its handler's hands (the Redis bus's close timeout). */
const CLOSE_DRAIN_MS = 10_000;
/** How often a subscribe waiting for an unreachable cluster says it still waits. */
const AWAY_TOLD_EVERY_MS = 30_000;

/**
 * Longest a fetch waits on the broker for records (Kafka's own consumer
 * default, fetch.max.wait.ms; the Redis bus blocks 1 s). A closing consumer
 * waits for its fetch in flight, and with kafkajs's 5 s each of core's
 * subscriptions, closed one after another, took up to 5 s to close: core
 * overran its 10 s shutdown grace under `hermod start` and was cut short.
 */
const FETCH_MAX_WAIT_MS = 500;

/**
 * How long a topic this bus has just made sure of may stay unknown to the
 * broker asked about it. On a fresh three-node Kafka 3.9 cluster a broker
 * answered the metadata request of createTopics({ waitForLeaders }) — and of
 * a consumer's subscribe() — with UNKNOWN_TOPIC_OR_PARTITION before the new
 * topic reached it; kafkajs retries neither, and core exited at start-up.
 */
const TOPIC_PROPAGATION_MS = 30_000;

async function untilKnown<T>(attempt: () => Promise<T>, waitMs = TOPIC_PROPAGATION_MS): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (!isKafkaProtocolError(err, 'UNKNOWN_TOPIC_OR_PARTITION') || Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export const kafkaClientId = (): string => `hermod-${randomUUID().slice(0, 8)}`;
