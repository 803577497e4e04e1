/**
 * kafkajs or a maintained client (issue 11): the raw clients side by side, in
 * one run, against one KRaft broker started from Maven Central jars
 * (test/support/kafka-cluster.ts), on the workload of bench/kafka-bus-bench.ts.
 *
 *   npx tsx bench/kafka-client-comparison.ts
 *
 * Each client gets its own topic (BENCH_PARTITIONS partitions, RF 1) and one
 * idempotent producer (acks all, one request in flight per broker) shared by
 * BENCH_PUBLISHERS concurrent senders, each sending BENCH_BATCH keyed records
 * at a time, then one new consumer-group member reads the topic from the
 * start. One warm-up record per topic is sent before the clock starts (so
 * connection and producer-id set-up are not timed); consume time includes the
 * group join, as in kafka-bus-bench.ts. Offsets are committed by each client's
 * own default (kafkajs after each batch, @platformatic/kafka after each fetch).
 *
 * Knobs: BENCH_KAFKA_VERSION (default the newest 4.x the tests use),
 * BENCH_RECORDS (200000), BENCH_BATCH (500), BENCH_PUBLISHERS (4),
 * BENCH_VALUE_BYTES (200), BENCH_PARTITIONS (8), BENCH_PHASE_TIMEOUT_MS
 * longest one produce or consume phase may take (300000).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Consumer as PltConsumer, Producer as PltProducer, compatibilityPartitioner, stringSerializer } from '@platformatic/kafka';
import { Kafka, Partitioners, logLevel, type Admin, type PartitionMetadata } from 'kafkajs';
import { KAFKA_VERSIONS, startKafkaCluster } from '../test/support/kafka-cluster';

const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const version = process.env.BENCH_KAFKA_VERSION ?? KAFKA_VERSIONS[KAFKA_VERSIONS.length - 1]!;
const records = env('BENCH_RECORDS', 200_000);
const batch = env('BENCH_BATCH', 500);
const publishers = env('BENCH_PUBLISHERS', 4);
const valueBytes = env('BENCH_VALUE_BYTES', 200);
const partitions = env('BENCH_PARTITIONS', 8);
const phaseTimeoutMs = env('BENCH_PHASE_TIMEOUT_MS', 300_000);

const require = createRequire(import.meta.url);
/** The installed version of a package, read from its package.json (whose `exports` may not list it). */
function packageVersion(name: string): string {
  for (let dir = path.dirname(require.resolve(name)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version: string };
    if (pkg.name === name) return pkg.version;
  }
  return 'unknown';
}

// The value carries world text, as messages do; padded to the configured size.
const body = Buffer.from('Kia ora, e hoa mā — Привет — 你好世界 👋🏽🎉 '.repeat(Math.ceil(valueBytes / 40))).subarray(0, valueBytes);
const keyOf = (i: number): string => `+6421${String(i % 10_000).padStart(6, '0')}`;

/** One client under test: sends one batch of keyed records, and reads `expected` records as a new group member. */
interface ClientUnderTest {
  readonly name: string;
  send(topic: string, batch: { key: string; value: Buffer }[]): Promise<void>;
  consume(topic: string, group: string, expected: number): Promise<void>;
  close(): Promise<void>;
}

interface Figures {
  client: string;
  publishPerSecond?: number;
  consumePerSecond?: number;
  error?: string;
}

const withTimeout = <T>(what: string, p: Promise<T>): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took longer than ${phaseTimeoutMs} ms`)), phaseTimeoutMs)),
  );
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
};

/** An error with its causes and, for @platformatic/kafka's aggregate errors, the errors it holds. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const inner = [...((err as { errors?: unknown[] }).errors ?? []), ...(err.cause === undefined ? [] : [err.cause])];
  return inner.length === 0 ? err.message : `${err.message} (${[...new Set(inner.map(describe))].join('; ')})`;
}

const rate = (n: number, ms: number): number => Math.round((n / ms) * 1000);

function kafkajsClient(brokers: string[], admin: Admin, perPartition: boolean): ClientUnderTest {
  const kafka = new Kafka({ clientId: 'hermod-bench', brokers, logLevel: logLevel.WARN });
  // As the adapter configures it: idempotence needs one request in flight per broker.
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  const connected = producer.connect();
  const partitioner = Partitioners.DefaultPartitioner();
  const metadata = new Map<string, Promise<PartitionMetadata[]>>();
  const consumers: ReturnType<Kafka['consumer']>[] = [];
  return {
    name: perPartition
      ? `kafkajs ${packageVersion('kafkajs')}, one send() per partition (the adapter)`
      : `kafkajs ${packageVersion('kafkajs')}, one send() per batch`,
    async send(topic, messages) {
      await connected;
      if (!perPartition) {
        await producer.send({ topic, acks: -1, messages });
        return;
      }
      // What core/adapters/kafka-bus-publish.ts does: split by the default partitioner, one send per partition.
      let meta = metadata.get(topic);
      if (!meta) {
        meta = admin.fetchTopicMetadata({ topics: [topic] }).then((m) => m.topics[0]?.partitions ?? []);
        metadata.set(topic, meta);
      }
      const partitionMetadata = await meta;
      const byPartition = new Map<number, { key: string; value: Buffer; partition: number }[]>();
      for (const message of messages) {
        const partition = partitioner({ topic, partitionMetadata, message });
        const list = byPartition.get(partition) ?? [];
        list.push({ ...message, partition });
        byPartition.set(partition, list);
      }
      await Promise.all([...byPartition.values()].map((list) => producer.send({ topic, acks: -1, messages: list })));
    },
    async consume(topic, group, expected) {
      const consumer = kafka.consumer({ groupId: group, allowAutoTopicCreation: false });
      consumers.push(consumer);
      let seen = 0;
      let done!: () => void;
      const all = new Promise<void>((r) => (done = r));
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        partitionsConsumedConcurrently: partitions,
        eachBatch: async ({ batch: b }) => {
          seen += b.messages.length;
          if (seen >= expected) done();
        },
      });
      await all;
    },
    async close() {
      await Promise.all(consumers.map((c) => c.disconnect()));
      await producer.disconnect();
    },
  };
}

/**
 * `concurrent`: the senders' send() calls overlap, as the bus's publish() calls do.
 * `serialized`: one send() at a time (a queue in front of the producer).
 * `not-idempotent`: overlapping sends, acks all, without idempotence.
 */
type PlatformaticMode = 'concurrent' | 'serialized' | 'not-idempotent';

function platformaticClient(brokers: string[], mode: PlatformaticMode): ClientUnderTest {
  const idempotent = mode !== 'not-idempotent';
  // compatibilityPartitioner is Java's (and kafkajs's) murmur2 mapping, so keys land where they do today.
  const producer = new PltProducer<string, Buffer, Buffer, Buffer>({
    clientId: 'hermod-bench',
    bootstrapBrokers: brokers,
    idempotent, // which also sets acks all and one request in flight
    acks: -1,
    autocreateTopics: false,
    partitioner: compatibilityPartitioner,
    serializers: { key: stringSerializer },
  });
  const consumers: PltConsumer[] = [];
  let queue: Promise<unknown> = Promise.resolve();
  const label = {
    concurrent: 'idempotent, overlapping sends',
    serialized: 'idempotent, one send() at a time',
    'not-idempotent': 'not idempotent, overlapping sends',
  }[mode];
  return {
    name: `@platformatic/kafka ${packageVersion('@platformatic/kafka')}, one send() per batch, ${label}`,
    async send(topic, messages) {
      const sent = (): Promise<unknown> => producer.send({ messages: messages.map((m) => ({ topic, key: m.key, value: m.value })) });
      if (mode !== 'serialized') {
        await sent();
        return;
      }
      const mine = queue.then(sent);
      queue = mine.catch(() => undefined);
      await mine;
    },
    async consume(topic, group, expected) {
      const consumer = new PltConsumer({ groupId: group, clientId: 'hermod-bench', bootstrapBrokers: brokers });
      consumers.push(consumer);
      // A new group starts from the beginning, as kafkajs's fromBeginning does.
      const stream = await consumer.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest' });
      let seen = 0;
      await new Promise<void>((resolve, reject) => {
        stream.on('error', reject);
        stream.on('data', () => {
          if (++seen === expected) resolve();
        });
      });
      await stream.close();
    },
    async close() {
      await Promise.all(consumers.map((c) => c.close(true)));
      await producer.close();
    },
  };
}

async function measure(client: ClientUnderTest, admin: Admin): Promise<Figures> {
  const topic = `compare-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }] });
  const figures: Figures = { client: client.name };
  try {
    await withTimeout(`${client.name}: warm-up`, client.send(topic, [{ key: 'warm-up', value: body }]));

    let next = 0;
    const publishStart = performance.now();
    await withTimeout(
      `${client.name}: publish`,
      Promise.all(
        Array.from({ length: publishers }, async () => {
          while (next < records) {
            const from = next;
            next += batch;
            const n = Math.min(batch, records - from);
            await client.send(
              topic,
              Array.from({ length: n }, (_, i) => ({ key: keyOf(from + i), value: body })),
            );
          }
        }),
      ),
    );
    figures.publishPerSecond = rate(records, performance.now() - publishStart);

    const consumeStart = performance.now();
    await withTimeout(`${client.name}: consume`, client.consume(topic, `${topic}-group`, records + 1));
    figures.consumePerSecond = rate(records + 1, performance.now() - consumeStart);
  } catch (err) {
    figures.error = describe(err);
  } finally {
    await client.close().catch(() => undefined);
  }
  return figures;
}

const cluster = await startKafkaCluster({ version });
console.error(new Date().toISOString(), `Kafka ${cluster.version} up at ${cluster.brokers.join(',')}`);
try {
  const kafka = new Kafka({ clientId: 'hermod-bench-admin', brokers: cluster.brokers, logLevel: logLevel.WARN });
  const admin = kafka.admin();
  await admin.connect();
  const results: Figures[] = [];
  for (const client of [
    kafkajsClient(cluster.brokers, admin, true),
    kafkajsClient(cluster.brokers, admin, false),
    platformaticClient(cluster.brokers, 'concurrent'),
    platformaticClient(cluster.brokers, 'serialized'),
    platformaticClient(cluster.brokers, 'not-idempotent'),
  ]) {
    const figures = await measure(client, admin);
    console.error(new Date().toISOString(), JSON.stringify(figures));
    results.push(figures);
  }
  await admin.disconnect();

  console.log(
    `Kafka ${cluster.version} (one KRaft node), ${records} records of ${valueBytes} B, ${partitions} partitions, batches of ${batch} from ${publishers} concurrent senders`,
  );
  console.log('| client | publish records/s | consume records/s |');
  console.log('|---|---:|---:|');
  for (const r of results) {
    const cell = (n: number | undefined): string => (n === undefined ? `failed: ${r.error ?? 'not reached'}` : n.toLocaleString('en-US'));
    console.log(`| ${r.client} | ${cell(r.publishPerSecond)} | ${cell(r.consumePerSecond)} |`);
  }
} finally {
  await cluster.stop();
}
// A client whose close() failed (a producer left in error) keeps reconnecting to the stopped broker for minutes.
process.exit(0);
