import { describe, expect, it } from 'vitest';
import { createMemoryBus } from '../adapters/memory-bus';
import { createLogger } from '../../lib/log';
import { untilConsumed } from './until-consumed';

describe('waiting for the in-process bus to be consumed before a stop', () => {
  it('waits for what handling one topic publishes to another, looked at after it (review: a reply’s read status)', async () => {
    const bus = createMemoryBus({ partitions: 1 });
    const statuses: string[] = [];
    await bus.subscribe(
      'status',
      async (records) => {
        await new Promise((r) => setTimeout(r, 20));
        statuses.push(...records.map((r) => Buffer.from(r.value as Uint8Array).toString()));
      },
      { group: 'core-status' },
    );
    await bus.subscribe(
      'inbound',
      async () => {
        await new Promise((r) => setTimeout(r, 100));
        await bus.publish('status', [{ key: 'm1', value: Buffer.from('read — kua pānuitia 👀') }]);
      },
      { group: 'core-inbound' },
    );
    await bus.publish('inbound', [{ key: '+64211234567', value: Buffer.from('Kia ora 👋🏽') }]);
    await untilConsumed(
      bus,
      [
        { topic: 'status', group: 'core-status' },
        { topic: 'inbound', group: 'core-inbound' },
      ],
      5_000,
      createLogger({ component: 'until-consumed-test' }),
    );
    expect(statuses).toEqual(['read — kua pānuitia 👀']);
    await bus.close();
  });
});
