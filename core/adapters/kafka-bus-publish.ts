import { Partitioners, type Admin, type PartitionMetadata, type Producer } from 'kafkajs';
import { type BusRecord, valueBytes } from '../ports/bus';

/** How long a topic's partition count is trusted before it is read again (partitions can be added). */
const PARTITIONS_MAX_AGE_MS = 60_000;

/**
 * Publishes with one kafkajs send() per partition. kafkajs 2.2.4 retries a
 * multi-broker send with the answers of the brokers that already replied kept:
 * when a partition's leader dies and leadership moves to one of those brokers,
 * that partition's records are never sent again and send() still resolves.
 * The three-node failover test (test/kafka/kafka-failover.test.ts) lost 19 of
 * 3,000 acknowledged records that way. A send that holds one partition has
 * one leader, so its retry resends everything it holds.
 *
 * The partition is chosen as kafkajs's default partitioner (Java's murmur2)
 * would, so records keep the partitions they always had.
 */
export function createPartitionedPublisher(getProducer: () => Promise<Producer>, getAdmin: () => Promise<Admin>) {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionCounts = new Map<string, { at: number; metadata: Promise<PartitionMetadata[]> }>();

  const partitionMetadata = (topic: string): Promise<PartitionMetadata[]> => {
    const cached = partitionCounts.get(topic);
    if (cached && Date.now() - cached.at < PARTITIONS_MAX_AGE_MS) return cached.metadata;
    const metadata = (async () => {
      const admin = await getAdmin();
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      return topics[0]?.partitions ?? [];
    })();
    metadata.catch(() => partitionCounts.delete(topic));
    partitionCounts.set(topic, { at: Date.now(), metadata });
    return metadata;
  };

  return async (topic: string, records: readonly BusRecord[]): Promise<void> => {
    const [producer, metadata] = await Promise.all([getProducer(), partitionMetadata(topic)]);
    const byPartition = new Map<number, { key: string; value: Buffer }[]>();
    for (const r of records) {
      const message = { key: r.key, value: valueBytes(r.value) };
      const partition = partitioner({ topic, partitionMetadata: metadata, message });
      const list = byPartition.get(partition) ?? [];
      list.push(message);
      byPartition.set(partition, list);
    }
    await Promise.all(
      [...byPartition].map(([partition, messages]) => producer.send({ topic, acks: -1, messages: messages.map((m) => ({ ...m, partition })) })),
    );
  };
}
