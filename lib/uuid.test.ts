import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { heapHeldPer } from '../test/support/heap-held';
import { HASHED_MARK, hashedUuid, uuid } from './uuid';

/** What history asks for a keyed message by (KEYED_MESSAGES_SINCE): version 4, the fourth group starting with the mark. */
const isHashedUuid = (id: string): boolean => id[14] === '4' && id.startsWith(HASHED_MARK, 19);

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuid', () => {
  it('makes version-4 UUIDs in the lower-case form RFC 9562 writes', () => {
    for (let i = 0; i < 20_000; i++) expect(uuid()).toMatch(V4);
  });

  it('never repeats itself across many pools of random bytes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) seen.add(uuid());
    expect(seen.size).toBe(100_000);
  });

  it('uses every hex digit in every random position', () => {
    const digits = Array.from({ length: 36 }, () => new Set<string>());
    for (let i = 0; i < 5_000; i++) {
      for (const [p, c] of [...uuid()].entries()) digits[p]!.add(c);
    }
    const counts = digits.map((d) => d.size);
    // The dashes, the version digit and the variant digit are fixed or nearly so.
    expect(counts.filter((n, p) => ![8, 13, 14, 18, 19, 23].includes(p) && n !== 16)).toEqual([]);
    expect([counts[14], counts[19]]).toEqual([1, 4]);
  });

  it("costs a flat string's bytes where hot state keeps it, not a rope's (Node's randomUUID keeps about 490)", () => {
    const rope = heapHeldPer(100_000, () => Array.from({ length: 100_000 }, () => randomUUID()));
    const ours = heapHeldPer(100_000, () => Array.from({ length: 100_000 }, () => uuid()));
    expect(ours).toBeLessThan(80);
    expect(rope).toBeGreaterThan(ours * 3);
  });
});

describe('hashedUuid', () => {
  it('gives the same id for the same parts, in the version-4 layout, marked as hashed', () => {
    const id = hashedUuid('app-7', 'sms_v2:tono-1 ā 🌿', '0');
    expect(id).toMatch(V4);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-bee[0-9a-f]-[0-9a-f]{12}$/);
    expect(hashedUuid('app-7', 'sms_v2:tono-1 ā 🌿', '0')).toBe(id);
    expect(isHashedUuid(id)).toBe(true);
  });

  it('marks about one random id in a thousand as hashed, no more', () => {
    let marked = 0;
    for (let i = 0; i < 200_000; i++) if (isHashedUuid(uuid())) marked++;
    expect(marked).toBeGreaterThan(100);
    expect(marked).toBeLessThan(300);
  });

  it('gives different ids for different parts, however they are split', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('\0')),
          { minLength: 1, maxLength: 4 },
        ),
        fc.array(
          fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('\0')),
          { minLength: 1, maxLength: 4 },
        ),
        (a, b) => {
          fc.pre(a.length !== b.length || a.some((p, i) => p !== b[i]));
          expect(hashedUuid(...a)).not.toBe(hashedUuid(...b));
        },
      ),
    );
  });

  it('is a flat string, as uuid() is', () => {
    expect(heapHeldPer(50_000, () => Array.from({ length: 50_000 }, (_, i) => hashedUuid('app', String(i))))).toBeLessThan(80);
  });
});
