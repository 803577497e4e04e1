import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planRebalance, type RebalanceView } from './redis-bus-rebalance';

const NOW = 1_700_000_000_000;
const LEASE_MS = 5000;

/** A group of members with distinct tokens (consumer names in any script, as the bus makes them). */
const group = fc.uniqueArray(
  fc
    .tuple(
      fc.constantFrom('worker', 'kaimahi-ā', '工作者', '👷🏽'),
      fc.integer({ min: 0, max: 0xffff_ffff }).map((n) => n.toString(16).padStart(8, '0')),
    )
    .map(([name, id]) => `${name}#${id}`),
  { minLength: 1, maxLength: 10 },
);

const view = (partitions: number, token: string, members: string[], owners: (string | undefined)[], freeSince = new Map<number, number>()): RebalanceView => {
  const free = owners.flatMap((o, p) => (o === undefined ? [p] : []));
  const held = owners.filter((o) => o === token).length;
  return { partitions, token, members, owners, held, free, freeSince, now: NOW, leaseMs: LEASE_MS };
};

/** Every member in turn takes and hands back what its plan says, as the lease rounds do, until nothing moves. */
function settle(partitions: number, members: string[], owners: (string | undefined)[]): number {
  for (let round = 1; round <= 4 * partitions + 10; round++) {
    let moved = false;
    for (const token of members) {
      const plan = planRebalance(view(partitions, token, members, owners));
      for (const p of plan.take) owners[p] = token;
      const mine = owners.flatMap((o, p) => (o === token ? [p] : []));
      for (const p of mine.slice(0, plan.handBack)) owners[p] = undefined;
      moved ||= plan.take.length > 0 || plan.handBack > 0;
    }
    if (!moved) return round;
  }
  return Number.POSITIVE_INFINITY;
}

describe('sharing partitions among the members of a group', () => {
  it('lets a lone member take every free partition and hand back none', () => {
    const plan = planRebalance(view(8, 'solo#1', ['solo#1'], Array(8).fill(undefined)));
    expect(plan.take.toSorted((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(plan.handBack).toBe(0);
  });

  it('counts a member that is not yet in the members list as one of them', () => {
    const plan = planRebalance(view(8, 'new#1', ['old#1'], Array(8).fill(undefined)));
    expect(plan.take).toHaveLength(4);
  });

  it('takes only free partitions, each once, and no more than its share unless one was left free for a whole lease', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }), group, fc.nat(), fc.array(fc.nat(), { maxLength: 64 }), (partitions, members, seed, freeAges) => {
        const owners = Array.from({ length: partitions }, (_, p) => ((seed >> (p % 31)) & 1 ? members[(seed + p) % members.length] : undefined));
        const token = members[seed % members.length]!;
        const freeSince = new Map(freeAges.slice(0, partitions).map((age, p) => [p, NOW - (age % (2 * LEASE_MS))] as const));
        const v = view(partitions, token, members, owners, freeSince);
        const plan = planRebalance(v);
        expect(new Set(plan.take).size).toBe(plan.take.length);
        for (const p of plan.take) expect(v.free).toContain(p);
        const stale = v.free.filter((p) => NOW - (freeSince.get(p) ?? NOW) >= LEASE_MS);
        for (const p of stale) expect(plan.take).toContain(p);
        const share = Math.ceil(partitions / members.length);
        expect(plan.take.filter((p) => !stale.includes(p)).length).toBeLessThanOrEqual(Math.max(0, share - v.held));
      }),
    );
  });

  it('settles from any starting split on every partition held and no member holding two more than another', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 32 }), group, fc.array(fc.nat(), { minLength: 32, maxLength: 32 }), (partitions, members, start) => {
        // Any start, e.g. one member holding everything after the others restarted.
        const owners = Array.from({ length: partitions }, (_, p) => (start[p]! % 3 === 0 ? undefined : members[start[p]! % members.length]));
        expect(settle(partitions, members, owners)).toBeLessThan(Number.POSITIVE_INFINITY);
        expect(owners.every((o) => o !== undefined)).toBe(true);
        const counts = members.map((m) => owners.filter((o) => o === m).length);
        expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('has members that start together reach for different partitions first', () => {
    const members = ['kaimahi-ā#0a1b2c3d', 'kaimahi-ā#4e5f6a7b', 'kaimahi-ā#8c9d0e1f', 'kaimahi-ā#2a3b4c5d'];
    const firsts = members.map((token) => planRebalance(view(64, token, members, Array(64).fill(undefined))).take[0]);
    expect(new Set(firsts).size).toBeGreaterThan(1);
  });
});
