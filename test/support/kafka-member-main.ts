import { createKafkaBus } from '../../core/adapters/kafka-bus';
import { valueBytes } from '../../core/ports/bus';
import type { KafkaMemberOptions } from './kafka-member-process';

// The body of startKafkaMemberProcess (kafka-member-process.ts): a member that holds batches forever
// (those with a record whose text starts with `ending`, if given, end at once).
const o = JSON.parse(process.env.MEMBER_ARGS ?? '{}') as KafkaMemberOptions;
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
