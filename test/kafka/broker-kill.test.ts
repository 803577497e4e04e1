import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topicName } from '../../core/ports/bus';
import { enginesRequired } from '../support/engines-required';
import { KAFKA_VERSIONS, kafkaUnavailableReason, startKafkaCluster, type KafkaCluster } from '../support/kafka-cluster';
import { eventually } from '../support/eventually';
import type { RoleProcess } from '../support/role-process';
import { deleteRedisKeys, randomPrefix } from '../support/redis-keys';
import { runMultiProcess } from '../support/multi-process-run';

// Issue 11, "a broker dies": hermod's roles as processes of their own on three Kafka nodes
// (replication factor 3, min.insync.replicas 2, acks all). Halfway through, the broker that
// leads most partitions of the SMS topic is killed with -9, and every accepted message must
// still reach the carrier. One version only: a three-node cluster is slow to start in CI.
const unavailable = kafkaUnavailableReason();
const NEWEST = KAFKA_VERSIONS.at(-1)!;

if (unavailable && !enginesRequired) {
  console.warn(`Kafka broker-kill test skipped: ${unavailable}`);
  describe('a Kafka broker dies under hermod', () => {
    it.skip(`runs against a three-node Kafka cluster; skipped here because ${unavailable}`, () => undefined);
  });
} else {
  describe(`hermod on three Kafka ${NEWEST} nodes when a broker dies`, () => {
    let cluster: KafkaCluster | undefined;
    const processes: RoleProcess[] = [];
    const prefix = randomPrefix('bk');
    beforeAll(async () => {
      if (unavailable) throw new Error(`this run must include the Kafka tests, but ${unavailable}`);
      cluster = await startKafkaCluster({ version: NEWEST, nodes: 3, properties: { 'min.insync.replicas': '2' } });
    }, 15 * 60_000);
    afterAll(async () => {
      await Promise.all(processes.map((p) => p.stop().catch(() => undefined)));
      await cluster?.stop();
      await deleteRedisKeys(prefix);
    }, 120_000);

    it('delivers every accepted message to the carrier when the broker leading most SMS partitions is killed with -9 mid-run', async () => {
      const c = cluster!;
      let killed: number | undefined;
      await runMultiProcess(
        `Kafka ${NEWEST}`,
        { HERMOD_BUS: 'kafka', HERMOD_KAFKA_BROKERS: c.brokers.join(','), HERMOD_KAFKA_REPLICATION_FACTOR: '3', HERMOD_KAFKA_SESSION_TIMEOUT: '8s' },
        prefix,
        processes,
        {
          title: 'broker kill',
          disrupt: async () => {
            const leaders = await partitionLeaders(c.brokers, topicName('sms'));
            killed = mostFrequent(leaders);
            c.nodes.find((n) => n.id === killed)!.kill();
            // The kill counts only once its partitions have failed over to the brokers left.
            const alive = c.nodes.filter((n) => n.id !== killed).map((n) => n.address);
            const after = await eventually(
              async () => {
                const now = await partitionLeaders(alive, topicName('sms'));
                return now.every((l) => l !== killed && l >= 0) ? now : undefined;
              },
              60_000,
              500,
            );
            console.log(
              `killed broker ${killed}, leader of ${leaders.filter((l) => l === killed).length} of ${leaders.length} partitions of ${topicName('sms')}; leaders after: ${after.join(' ')}`,
            );
          },
          // A dead broker can cost the workers' group its last offset commits, so a whole
          // uncommitted stretch may be redelivered; at least once is the promise, not exactly once.
          maxDuplicates: Number.POSITIVE_INFINITY,
        },
      );
      expect(killed).toBeDefined();
      expect(c.nodes.find((n) => n.id === killed)!.running()).toBe(false);
    }, 900_000);
  });
}

/** The leader of each of the topic's partitions, by partition. */
async function partitionLeaders(brokers: string[], topic: string): Promise<number[]> {
  const admin = new Kafka({ clientId: 'hermod-test-leaders', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    return [...topics[0]!.partitions].sort((a, b) => a.partitionId - b.partitionId).map((p) => p.leader);
  } finally {
    await admin.disconnect();
  }
}

function mostFrequent(values: readonly number[]): number {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
}
