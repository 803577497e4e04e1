import { register } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMemoryBus } from './memory-bus';
import { withFailedBatchCount } from './failed-batch-count';

const failed = async (topic: string, group: string): Promise<number> =>
  (await register.getSingleMetric('hermod_bus_batches_failed_total')?.get())?.values.find((v) => v.labels.topic === topic && v.labels.group === group)?.value ??
  0;

describe('a batch whose handler fails', () => {
  it('is counted by topic and group each time, for an alert on a batch that keeps failing, and is handed again until it is handled', async () => {
    const bus = withFailedBatchCount(createMemoryBus({ partitions: 1, retryDelayMs: 5, maxRetryDelayMs: 5 }));
    const topic = `hermod.failing-${Date.now()}`;
    const before = await failed(topic, 'pūrere');
    let tries = 0;
    const handled: string[] = [];
    const done = new Promise<void>((resolve) => {
      void bus.subscribe(
        topic,
        async (records) => {
          tries++;
          if (tries <= 3) throw new Error('history is away');
          handled.push(...records.map((r) => r.value.toString()));
          resolve();
        },
        { group: 'pūrere' },
      );
    });
    await bus.publish(topic, [{ key: '+6421000001', value: Buffer.from('Kia ora 👋🏽') }]);
    await done;
    expect(handled).toEqual(['Kia ora 👋🏽']);
    expect((await failed(topic, 'pūrere')) - before).toBe(3);
    await bus.close();
  });
});
