import { afterAll, beforeAll, describe, it } from 'vitest';
import { KAFKA_VERSIONS, kafkaUnavailableReason, startKafkaCluster, type KafkaCluster } from '../../test/support/kafka-cluster';
import { describeBusContract } from './bus-contract';
import { createKafkaBus } from './kafka-bus';

// A real broker per supported Kafka line, started from Maven Central jars. Without java or mvn
// the suite skips with the reason, except in CI, where a skipped Kafka suite would hide a regression.
const unavailable = kafkaUnavailableReason();

if (unavailable && !process.env.CI) {
  console.warn(`Kafka bus contract skipped: ${unavailable}`);
  describe('Bus contract: Kafka', () => {
    it.skip(`runs against real Kafka brokers; skipped here because ${unavailable}`, () => undefined);
  });
} else {
  for (const version of KAFKA_VERSIONS) {
    // A cold broker and the group rebalances of kafkajs take seconds, not milliseconds.
    describe(`Kafka ${version}`, { timeout: 120_000 }, () => {
      let cluster: KafkaCluster | undefined;
      beforeAll(async () => {
        cluster = await startKafkaCluster({ version });
      }, 15 * 60_000);
      afterAll(async () => {
        await cluster?.stop();
      }, 60_000);

      describeBusContract(
        `Kafka ${version} (kafkajs)`,
        () => createKafkaBus({ brokers: cluster!.brokers, partitions: 4, replicationFactor: 1, retryBackoffMs: 50 }),
        { timeoutMs: 60_000, settleMs: 3_000 },
      );
    });
  }
}
