import { describe, expect, it } from 'vitest';
import { createNumericIds } from './numeric-ids';

describe('numeric message ids', () => {
  it('are unique and increasing even for a burst within one millisecond', () => {
    const next = createNumericIds(3, () => Date.UTC(2026, 10, 22));
    const ids = Array.from({ length: 5000 }, next);
    expect(new Set(ids).size).toBe(5000);
    for (let i = 1; i < ids.length; i++) expect(ids[i]!).toBeGreaterThan(ids[i - 1]!);
  });

  it('stay within what a JavaScript client can hold exactly, for decades', () => {
    const next = createNumericIds(15, () => Date.UTC(2090, 0, 1));
    expect(next()).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
  });

  it('differ between core instances started in the same millisecond', () => {
    const t = () => Date.UTC(2026, 0, 1);
    expect(createNumericIds(0, t)()).not.toBe(createNumericIds(1, t)());
  });
});

describe('numeric id blocks reserved for campaigns', () => {
  it('never overlap the ids handed out before or after them', async () => {
    const { campaignMessageNumericId } = await import('../campaigns/campaign-message-ids');
    const next = createNumericIds(2, () => Date.UTC(2026, 10, 22));
    const before = Array.from({ length: 300 }, next);
    const base = next.reserve(10_000);
    const block = Array.from({ length: 10_000 }, (_, p) => campaignMessageNumericId(base, p));
    const after = Array.from({ length: 300 }, next);
    const all = [...before, ...block, ...after];
    expect(new Set(all).size).toBe(all.length);
    expect(Math.min(...after)).toBeGreaterThan(Math.max(...block));
  });

  it('are skipped after a restart, whatever the clock says', () => {
    const first = createNumericIds(0, () => Date.UTC(2026, 10, 22));
    const base = first.reserve(1_000_000);
    const top = base + Math.ceil(1_000_000 / 256) * 4096;
    const restarted = createNumericIds(0, () => Date.UTC(2026, 10, 22));
    restarted.skipPast(top);
    expect(restarted()).toBeGreaterThan(top);
  });
});
