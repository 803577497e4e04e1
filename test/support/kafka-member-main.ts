import { createKafkaBus } from '../../core/adapters/kafka-bus';

// The body of startKafkaMemberProcess (kafka-member-process.ts): a member that holds every batch forever.
const o = JSON.parse(process.env.MEMBER_ARGS ?? '{}') as { brokers: string[]; topic: string; group: string; sessionTimeoutMs: number };
const bus = createKafkaBus({ brokers: o.brokers, partitions: 1, replicationFactor: 1, sessionTimeoutMs: o.sessionTimeoutMs });
await bus.subscribe(
  o.topic,
  async (records) => {
    process.stdout.write(`held ${records.map((r) => r.offset).join(',')}\n`);
    await new Promise(() => undefined);
  },
  { group: o.group },
);
process.stdout.write('subscribed\n');
