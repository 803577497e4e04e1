import { fnv1a } from './memory-bus';

export interface RebalanceView {
  partitions: number;
  /** This member. */
  token: string;
  /** The group's live members, this one included or not (it counts itself either way). */
  members: readonly string[];
  /** The lease holder of each partition, if any. */
  owners: readonly (string | undefined)[];
  /** Partitions this member holds and keeps (not lost, abandoned, or on the way back). */
  held: number;
  /** Partitions nobody holds. */
  free: readonly number[];
  /** When each free partition was first seen without an owner, in the current run of sightings. */
  freeSince: ReadonlyMap<number, number>;
  now: number;
  leaseMs: number;
}

export interface RebalancePlan {
  /** Free partitions to take, most wanted first. */
  take: number[];
  /** How many held partitions to hand back. */
  handBack: number;
}

/**
 * One member's share of a fair split of the partitions among n live members.
 * One under ceil(P/n) takes free partitions, starting at a place of its own
 * (so members that start together reach for different ones); one over it
 * hands partitions back when another member has fewer than floor(P/n), or
 * one when another has two fewer than it. A partition left free for a whole
 * lease (its owner stuck or dead) is taken by anyone, share or not.
 */
export function planRebalance(view: RebalanceView): RebalancePlan {
  const { partitions, token, members, owners, held, freeSince, now, leaseMs } = view;
  const counts = new Map<string, number>();
  for (const owner of owners) if (owner !== undefined) counts.set(owner, (counts.get(owner) ?? 0) + 1);

  const n = Math.max(1, members.includes(token) ? members.length : members.length + 1);
  const quota = Math.ceil(partitions / n);
  const floor = Math.floor(partitions / n);

  // Take free partitions: up to our share, plus any left free for a whole lease (stuck or dead owner).
  const offset = fnv1a(token) % partitions;
  const free = [...view.free].sort((a, b) => ((a - offset + partitions) % partitions) - ((b - offset + partitions) % partitions));
  let room = quota - held;
  const take = free.filter((p) => {
    if (room > 0) {
      room -= 1;
      return true;
    }
    return now - (freeSince.get(p) ?? now) >= leaseMs;
  });

  // Hand back surplus when another member has clearly less.
  const others = members.filter((m) => m !== token).map((m) => counts.get(m) ?? 0);
  if (others.length === 0) return { take, handBack: 0 };
  const fewest = Math.min(...others);
  let handBack = 0;
  if (held > quota && fewest < floor) handBack = held - quota;
  else if (held > floor && held - fewest >= 2) handBack = 1;
  return { take, handBack };
}
