import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { heapHeldPer } from '../../test/support/heap-held';
import {
  campaignMessageId,
  campaignMessageNumericId,
  campaignMessageRange,
  campaignOfMessage,
  isCampaignMessageId,
  positionOfCampaignMessage,
} from './campaign-message-ids';

describe('campaign message ids', () => {
  const campaign = 2 ** 53 - 12345;

  it('are UUIDs that name their campaign and position', () => {
    const id = campaignMessageId(campaign, 999_999);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(isCampaignMessageId(id)).toBe(true);
    expect(campaignOfMessage(id)).toBe(campaign);
    expect(positionOfCampaignMessage(id)).toBe(999_999);
  });

  it("cost a flat string's bytes, not a rope's, while a million-member fan-out holds them in hot state", () => {
    const held = heapHeldPer(100_000, () => Array.from({ length: 100_000 }, (_, p) => campaignMessageId(campaign, p)));
    expect(held).toBeLessThan(80);
  });

  it('spell the campaign in the first 16 hex digits around the version and the position in the last 8, for any campaign and position', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: 0, max: 2 ** 32 - 1 }), (c, p) => {
        const hex = c.toString(16).padStart(14, '0');
        const id = campaignMessageId(c, p);
        expect(id).toBe(`${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(12)}0-8000-0000${p.toString(16).padStart(8, '0')}`);
        expect([campaignOfMessage(id), positionOfCampaignMessage(id)]).toEqual([c, p]);
      }),
    );
  });

  it('are the same every time, so a resumed fan-out recreates the same ids', () => {
    expect(campaignMessageId(42, 7)).toBe(campaignMessageId(42, 7));
    expect(campaignMessageId(42, 7)).not.toBe(campaignMessageId(43, 7));
  });

  it('sort by position, so a position range is an id range', () => {
    const { lo, hi } = campaignMessageRange(campaign, 256, 512);
    for (const p of [256, 300, 511]) {
      const id = campaignMessageId(campaign, p);
      expect(id >= lo && id < hi).toBe(true);
    }
    for (const p of [0, 255, 512, 1_000_000]) {
      const id = campaignMessageId(campaign, p);
      expect(id >= lo && id < hi).toBe(false);
    }
  });

  it('are not mistaken for random message ids', () => {
    expect(isCampaignMessageId('0d6f5b3c-2f1e-4c9a-8b7d-1234567890ab')).toBe(false);
    expect(campaignOfMessage('0d6f5b3c-2f1e-4c9a-8b7d-1234567890ab')).toBe(0);
  });

  it('give every position its own numeric id inside the reserved block', () => {
    const base = 1_000_000 * 4096;
    const seen = new Set<number>();
    for (let p = 0; p < 5000; p++) seen.add(campaignMessageNumericId(base, p));
    expect(seen.size).toBe(5000);
    expect(Math.max(...seen)).toBeLessThan(base + Math.ceil(5000 / 256) * 4096);
  });
});
