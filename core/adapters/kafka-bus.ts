import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Admin, type Consumer, type Producer } from 'kafkajs';
import type { BatchHandler, Bus, BusRecord, DeliveredRecord, SubscribeOptions, Subscription } from '../ports/bus';

export interface KafkaBusOptions {
  brokers: string[];
  clientId?: string;
  /** Create missing topics with this many partitions (0: never create). */
  partitions?: number;
  replicationFactor?: number;
  /** How long a failed batch waits before it is handed to the handler again. */
  retryBackoffMs?: number;
}

/**
 * The bus on Kafka. One topic per channel; records keyed by destination so
 * the default (murmur2) partitioner keeps one destination in order; one
 * consumer group per worker pool. The producer is idempotent and waits for
 * all in-sync replicas; offsets are committed by hand only after the handler
 * resolved, so a crash means redelivery, never loss.
 */
export function createKafkaBus(options: KafkaBusOptions): Bus {
  const kafka = new Kafka({ clientId: options.clientId ?? 'hermod', brokers: options.brokers, logLevel: logLevel.WARN });
  const partitions = options.partitions ?? 16;
  const retryBackoffMs = options.retryBackoffMs ?? 500;
  let producer: Promise<Producer> | undefined;
  let admin: Promise<Admin> | undefined;
  const knownTopics = new Map<string, Promise<void>>();
  const consumers = new Set<Consumer>();

  const getProducer = (): Promise<Producer> =>
    (producer ??= (async () => {
      // Idempotence needs one request in flight per broker to keep sequence numbers gapless.
      const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await p.connect();
      return p;
    })());

  const ensureTopic = (topic: string): Promise<void> => {
    let known = knownTopics.get(topic);
    if (!known) {
      known = (async () => {
        if (partitions <= 0) return;
        admin ??= (async () => {
          const a = kafka.admin();
          await a.connect();
          return a;
        })();
        const a = await admin;
        await a.createTopics({
          waitForLeaders: true,
          topics: [{ topic, numPartitions: partitions, replicationFactor: options.replicationFactor ?? -1 }],
        });
      })();
      known.catch(() => knownTopics.delete(topic));
      knownTopics.set(topic, known);
    }
    return known;
  };

  return {
    async publish(topic: string, records: readonly BusRecord[]): Promise<void> {
      if (records.length === 0) return;
      await ensureTopic(topic);
      const p = await getProducer();
      await p.send({ topic, acks: -1, messages: records.map((r) => ({ key: r.key, value: r.value })) });
    },

    async subscribe(topic: string, handler: BatchHandler, subscribe: SubscribeOptions): Promise<Subscription> {
      await ensureTopic(topic);
      const maxBatch = subscribe.maxBatch ?? 256;
      const consumer = kafka.consumer({ groupId: subscribe.group, allowAutoTopicCreation: false });
      consumers.add(consumer);
      let closing = false;
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
          for (let start = 0; start < batch.messages.length; start += maxBatch) {
            const slice = batch.messages.slice(start, start + maxBatch);
            const records: DeliveredRecord[] = slice.map((m) => ({
              topic,
              partition: batch.partition,
              offset: m.offset,
              key: m.key?.toString('utf8') ?? '',
              value: m.value ?? Buffer.alloc(0),
              redeliveries: 0,
            }));
            for (let attempt = 0; ; attempt++) {
              if (!isRunning() || isStale() || closing) return;
              try {
                await handler(records.map((r) => ({ ...r, redeliveries: attempt })));
                break;
              } catch {
                await heartbeat();
                await new Promise((r) => setTimeout(r, Math.min(30_000, retryBackoffMs * 2 ** Math.min(attempt, 6))));
              }
            }
            const last = slice[slice.length - 1]!;
            resolveOffset(last.offset);
            await consumer.commitOffsets([{ topic, partition: batch.partition, offset: (BigInt(last.offset) + 1n).toString() }]);
            await heartbeat();
          }
        },
      });
      return {
        async close() {
          closing = true;
          consumers.delete(consumer);
          await consumer.disconnect();
        },
      };
    },

    async lag(topic: string, group: string): Promise<number> {
      admin ??= (async () => {
        const a = kafka.admin();
        await a.connect();
        return a;
      })();
      const a = await admin;
      const [ends, committed] = await Promise.all([a.fetchTopicOffsets(topic), a.fetchOffsets({ groupId: group, topics: [topic] })]);
      const done = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
      return ends.reduce((sum, p) => sum + Math.max(0, Number(p.high) - Math.max(0, done.get(p.partition) ?? Number(p.low))), 0);
    },

    async close(): Promise<void> {
      await Promise.all([...consumers].map((c) => c.disconnect()));
      consumers.clear();
      if (producer) await (await producer).disconnect();
      if (admin) await (await admin).disconnect();
    },
  };
}

export const kafkaClientId = (): string => `hermod-${randomUUID().slice(0, 8)}`;
