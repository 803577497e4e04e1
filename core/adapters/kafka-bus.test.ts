import { describe, it } from 'vitest';
import { describeBusContract } from './bus-contract';
import { createKafkaBus } from './kafka-bus';

const brokers = process.env.KAFKA_BROKERS?.split(',').map((b) => b.trim()).filter(Boolean);

if (brokers && brokers.length > 0) {
  describeBusContract('Kafka (kafkajs)', () => createKafkaBus({ brokers, partitions: 4, replicationFactor: 1 }), { timeoutMs: 60_000, settleMs: 5_000 });
} else {
  describe('Bus contract: Kafka (kafkajs)', () => {
    it.skip('runs when KAFKA_BROKERS is set (e.g. KAFKA_BROKERS=127.0.0.1:9092); no broker is configured here', () => undefined);
  });
}
