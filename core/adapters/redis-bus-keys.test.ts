import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { leaseKey, membersKey, streamKey } from './redis-bus-keys';
import { hashSlot } from './redis-connection';

/** Names in any script, without the braces that would end a hash tag. */
const name = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((s) => !/[{}]/.test(s));

describe('the Redis keys of the bus', () => {
  it('keep a partition stream and each of its leases in one hash slot, so one script may touch both on a cluster', () => {
    fc.assert(
      fc.property(name, name, fc.nat(1023), name, (prefix, topic, partition, group) => {
        const stream = streamKey(prefix, topic, partition);
        expect(hashSlot(leaseKey(stream, group))).toBe(hashSlot(stream));
      }),
    );
  });

  it('give every partition of a topic its own stream and the topic one members key per group', () => {
    const streams = Array.from({ length: 8 }, (_, p) => streamKey('hermod', 'hermod.whatsapp.v1', p));
    expect(new Set(streams).size).toBe(8);
    expect(streams[3]).toBe('{hermod:hermod.whatsapp.v1:3}');
    expect(leaseKey(streams[3]!, 'ngā-kaimahi')).toBe('{hermod:hermod.whatsapp.v1:3}:owner:ngā-kaimahi');
    expect(membersKey('hermod', 'hermod.whatsapp.v1', 'ngā-kaimahi')).toBe('{hermod:hermod.whatsapp.v1}:members:ngā-kaimahi');
  });
});
