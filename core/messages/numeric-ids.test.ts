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
