import { createKafkaBus } from '../../core/adapters/kafka-bus';
import { valueBytes } from '../../core/ports/bus';

// The body of startKafkaMemberProcess (kafka-member-process.ts): a member that holds batches forever
// (those with a record whose text starts with `ending`, if given, end at once).
const o = JSON.parse(process.env.MEMBER_ARGS ?? '{}') as {
  brokers: string[];
  topic: string;
  group: string;
  sessionTimeoutMs: number;
  inFlight?: number;
  maxBatch?: number;
  ending?: string;
};
const bus = createKafkaBus({ brokers: o.brokers, partitions: 1, replicationFactor: 1, sessionTimeoutMs: o.sessionTimeoutMs });
await bus.subscribe(
  o.topic,
  async (records) => {
    process.stdout.write(`held ${records.map((r) => r.offset).join(',')}\n`);
    const ending = o.ending;
    if (ending !== undefined && records.every((r) => valueBytes(r.value).toString('utf8').startsWith(ending))) return;
    await new Promise(() => undefined);
  },
  { group: o.group, inFlight: o.inFlight, maxBatch: o.maxBatch },
);
process.stdout.write('subscribed\n');
