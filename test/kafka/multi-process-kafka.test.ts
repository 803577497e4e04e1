import { afterAll, beforeAll, describe, it } from 'vitest';
import { enginesRequired } from '../support/engines-required';
import { KAFKA_VERSIONS, kafkaUnavailableReason, startKafkaCluster, type KafkaCluster } from '../support/kafka-cluster';
import type { RoleProcess } from '../support/role-process';
import { deleteRedisKeys, randomPrefix } from '../support/redis-keys';
import { runMultiProcess } from '../support/multi-process-run';

const unavailable = kafkaUnavailableReason();
const NEWEST = KAFKA_VERSIONS.at(-1)!;

if (unavailable && !enginesRequired) {
  console.warn(`Kafka multi-process test skipped: ${unavailable}`);
  describe('roles as separate processes on Kafka', () => {
    it.skip(`runs against a real Kafka broker; skipped here because ${unavailable}`, () => undefined);
  });
} else {
  describe(`roles as separate processes on Kafka ${NEWEST} and Redis state`, () => {
    let cluster: KafkaCluster | undefined;
    const processes: RoleProcess[] = [];
    const prefix = randomPrefix('mpk');
    beforeAll(async () => {
      if (unavailable) throw new Error(`this run must include the Kafka tests, but ${unavailable}`);
      cluster = await startKafkaCluster({ version: NEWEST });
    }, 15 * 60_000);
    afterAll(async () => {
      await Promise.all(processes.map((p) => p.stop().catch(() => undefined)));
      await cluster?.stop();
      await deleteRedisKeys(prefix);
    }, 120_000);

    it('delivers 5,000 messages sent through two gateways to the carrier at least once while one of three workers is killed with -9', async () => {
      await runMultiProcess(
        `Kafka ${NEWEST}`,
        // A worker killed with -9 gives its partitions up after 8 s, not the default 30 s.
        { HERMOD_BUS: 'kafka', HERMOD_KAFKA_BROKERS: cluster!.brokers.join(','), HERMOD_KAFKA_REPLICATION_FACTOR: '1', HERMOD_KAFKA_SESSION_TIMEOUT: '8s' },
        prefix,
        processes,
      );
    }, 600_000);
  });
}
