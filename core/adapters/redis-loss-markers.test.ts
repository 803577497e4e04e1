import { describe, expect, it } from 'vitest';
import { hashSlot } from './redis-connection';
import { tagsAcrossSlots } from './redis-loss-markers';

describe('the markers of data hot state lost', () => {
  it('are spread one in each equal range of the Cluster slots', () => {
    const tags = tagsAcrossSlots(64);
    expect(new Set(tags).size).toBe(64);
    for (const [i, tag] of tags.entries()) expect(Math.floor(hashSlot(`hermod:intact:{${tag}}`) / 256), tag).toBe(i);
  });
});
