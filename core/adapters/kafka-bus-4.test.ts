import { describeKafkaBusSuite } from './kafka-bus-suite';

// The Kafka bus contract and adapter tests against a real Kafka 4.4.0 broker.
describeKafkaBusSuite('4.4.0');
