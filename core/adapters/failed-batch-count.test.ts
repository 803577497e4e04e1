import { register } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { keptWarnings } from '../../lib/kept-warnings-test-kit';
import { createMemoryBus } from './memory-bus';
import { withFailedBatchCount } from './failed-batch-count';

/** The failed-batch count of a topic and group, undefined while it has no series. */
const series = async (topic: string, group: string): Promise<number | undefined> =>
  (await register.getSingleMetric('hermod_bus_batches_failed_total')?.get())?.values.find((v) => v.labels.topic === topic && v.labels.group === group)?.value;

describe('a batch whose handler fails', () => {
  it('is counted by topic and group each time, for an alert on a batch that keeps failing, and is handed again until it is handled', async () => {
    const { log, warnings } = keptWarnings();
    const bus = withFailedBatchCount(createMemoryBus({ partitions: 1, retryDelayMs: 5, maxRetryDelayMs: 5 }), log);
    const topic = `hermod.failing-${Date.now()}`;
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
    // The series is there from the subscription on, at 0: a rate over it sees the first failures too.
    await new Promise((r) => setTimeout(r, 20));
    expect(await series(topic, 'pūrere')).toBe(0);
    await bus.publish(topic, [{ key: '+6421000001', value: Buffer.from('Kia ora 👋🏽') }]);
    await done;
    expect(handled).toEqual(['Kia ora 👋🏽']);
    expect(await series(topic, 'pūrere')).toBe(3);
    // Told in the log whichever bus it is, once a minute for a topic and group, with the handler's error.
    expect(warnings).toEqual([
      {
        msg: 'a batch failed in its handler; it is handed again',
        fields: expect.objectContaining({ topic, group: 'pūrere', err: expect.objectContaining({ message: 'history is away' }) }),
      },
    ]);
    await bus.close();
  });
});
