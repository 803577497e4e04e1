import { describeKafkaBusSuite } from './kafka-bus-suite';

// The Kafka bus contract and adapter tests against a real Kafka 3.9.2 broker.
describeKafkaBusSuite('3.9.2');
