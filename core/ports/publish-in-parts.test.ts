import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { type BusRecord, valueBytes } from './bus';
import { publishInParts } from './publish-in-parts';

/** A bus that refuses, as Kafka does, a publish whose records come to more than `maxBytes` together. */
function limitedBus(maxBytes: number) {
  const published: string[] = [];
  let refusals = 0;
  return {
    published,
    refusals: () => refusals,
    async publish(_topic: string, records: readonly BusRecord[]) {
      const bytes = records.reduce((n, r) => n + valueBytes(r.value).length, 0);
      if (bytes > maxBytes) {
        refusals++;
        throw new HermodError('body_too_large', 'The request included a message larger than the max message size the server will accept');
      }
      for (const r of records) published.push(valueBytes(r.value).toString('utf8'));
    },
  };
}

const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.constantFrom('Tēnā koutou katoa 👩🏽‍🔬', '大促销', 'received'));

describe('publishing records the bus refuses as too large together', () => {
  it('publishes every record once, in order, whenever each fits alone (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(text, { minLength: 1, maxLength: 60 }), fc.integer({ min: 0, max: 400 }), async (values, room) => {
        const largest = Math.max(...values.map((v) => Buffer.byteLength(v)));
        const bus = limitedBus(largest + room);
        await publishInParts(
          bus,
          'hermod.status.v1',
          values.map((value, i) => ({ key: String(i), value: Buffer.from(value) })),
        );
        expect(bus.published).toEqual(values);
      }),
    );
  });

  it('refuses a record too large on its own, with the bus’s error', async () => {
    const bus = limitedBus(10);
    await expect(publishInParts(bus, 'hermod.status.v1', [{ key: 'a', value: Buffer.from('Kia ora e hoa mā, he roa rawa tēnei') }])).rejects.toMatchObject({
      code: 'body_too_large',
    });
  });

  it('passes any other refusal on at once, without splitting', async () => {
    let calls = 0;
    const away = {
      async publish() {
        calls++;
        throw new HermodError('unavailable', 'There is no leader for this topic-partition', { retryable: true });
      },
    };
    await expect(
      publishInParts(
        away,
        'hermod.status.v1',
        [1, 2, 3, 4].map((n) => ({ key: String(n), value: Buffer.from(`status ${n}`) })),
      ),
    ).rejects.toMatchObject({
      code: 'unavailable',
    });
    expect(calls).toBe(1);
  });
});
