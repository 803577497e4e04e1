/**
 * Produce and consume through the Kafka bus adapter on a real single-node
 * broker started from Maven Central jars (test/support/kafka-cluster.ts).
 *
 *   npx tsx bench/kafka-bus-bench.ts
 *
 * Knobs: BENCH_KAFKA_VERSION (default the newest 4.x the tests use),
 * BENCH_RECORDS (200000), BENCH_BATCH records per publish (500),
 * BENCH_PUBLISHERS concurrent publishers (4), BENCH_VALUE_BYTES (200),
 * BENCH_PARTITIONS (8).
 */
import { createKafkaBus } from '../core/adapters/kafka-bus';
import { KAFKA_VERSIONS, startKafkaCluster } from '../test/support/kafka-cluster';

const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const version = process.env.BENCH_KAFKA_VERSION ?? KAFKA_VERSIONS[KAFKA_VERSIONS.length - 1]!;
const records = env('BENCH_RECORDS', 200_000);
const batch = env('BENCH_BATCH', 500);
const publishers = env('BENCH_PUBLISHERS', 4);
const valueBytes = env('BENCH_VALUE_BYTES', 200);
const partitions = env('BENCH_PARTITIONS', 8);

const cluster = await startKafkaCluster({ version });
try {
  const bus = createKafkaBus({ brokers: cluster.brokers, partitions, replicationFactor: 1 });
  const topic = `bench-${Date.now()}`;
  // The value carries world text, as messages do; padded to the configured size.
  const body = Buffer.from('Kia ora, e hoa mā — Привет — 你好世界 👋🏽🎉 '.repeat(Math.ceil(valueBytes / 40))).subarray(0, valueBytes);
  await bus.publish(topic, [{ key: 'warm-up', value: body }]);

  let next = 0;
  const publishStart = performance.now();
  await Promise.all(
    Array.from({ length: publishers }, async () => {
      while (next < records) {
        const from = next;
        next += batch;
        const n = Math.min(batch, records - from);
        await bus.publish(
          topic,
          Array.from({ length: n }, (_, i) => ({ key: `+6421${String((from + i) % 10_000).padStart(6, '0')}`, value: body })),
        );
      }
    }),
  );
  const publishMs = performance.now() - publishStart;

  let consumed = 0;
  const consumeStart = performance.now();
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  const sub = await bus.subscribe(
    topic,
    async (batchRecords) => {
      consumed += batchRecords.length;
      if (consumed >= records + 1) done();
    },
    { group: `bench-${Date.now()}`, maxBatch: 256 },
  );
  await all;
  const consumeMs = performance.now() - consumeStart;
  await sub.close();
  await bus.close();

  const rate = (n: number, ms: number): number => Math.round((n / ms) * 1000);
  console.log(
    JSON.stringify({
      client: 'kafkajs 2.2.4',
      kafka: version,
      records,
      valueBytes,
      batch,
      publishers,
      partitions,
      publishPerSecond: rate(records, publishMs),
      consumePerSecond: rate(records + 1, consumeMs),
      consumeIncludesGroupJoinMs: true,
    }),
  );
} finally {
  await cluster.stop();
}
