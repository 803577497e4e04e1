import type { StatusUpdate } from '../ports/bus-payloads';
import { canAdvance } from '../domain/message-status';

/**
 * Delivery reports whose carrier id is not known yet: a receipt can overtake
 * the record of the submit it belongs to (another partition, a batch still
 * being retried, a restart). They wait here, off the bus, so they never hold
 * up the reports behind them, and are matched again until `holdMs` has passed
 * (then given up: a submit never recorded is sent again, and its new receipt
 * is matched instead). A report that came before its submit's own report
 * waits here too (status-consumer.ts), and `heldFor` tells for how long.
 *
 * One that history does not know either (`notFound`) is looked for again
 * `firstRetryMs` apart four times (a receipt that overtook the record of its
 * submit is matched as soon as ever), then twice as long each time up to
 * `longestRetryMs`:
 * a carrier redelivering receipts of another system's ids would otherwise
 * cost a history query for each of them every half second, and hold newer
 * reports, which are due at once, behind them.
 */
/** Misses looked for again `firstRetryMs` apart before the waits double. */
const QUICK_TRIES = 4;

export function createUnmatchedReports(options: {
  holdMs: number;
  maxHeld: number;
  now?: () => number;
  firstRetryMs?: number;
  longestRetryMs?: number;
  /** A report held before a restart whose time ran out meanwhile is still looked for this long after the start (10 s, or holdMs if shorter). */
  restartGraceMs?: number;
}) {
  const now = options.now ?? Date.now;
  const restartGraceMs = options.restartGraceMs ?? Math.min(10_000, options.holdMs);
  const firstRetryMs = options.firstRetryMs ?? 500;
  const longestRetryMs = options.longestRetryMs ?? 8_000;
  const held = new Map<string, { update: StatusUpdate; since: number; until: number; due: number; misses: number; nudged?: boolean }>();
  return {
    /**
     * Holds a report; false when it had to be dropped (too many held). `since`: when it was first held, before a
     * restart (its wait goes on from then, but for `restartGraceMs` at least), not now.
     */
    hold(update: StatusUpdate, since?: number): boolean {
      if (!update.carrierId) return false;
      const before = held.get(update.carrierId);
      if (!before && held.size >= options.maxHeld) return false;
      // One that is a step back from the held one (a delivered posted after its read: webhooks keep no order) adds
      // nothing: the held one says more, and is matched as it was.
      if (before && before.update.status !== update.status && !canAdvance(before.update.status, update.status, update.channel)) return true;
      // A later report for the same carrier id (a redelivery, a final after an intermediate) replaces it.
      const t = now();
      const from = since !== undefined && since < t ? since : t;
      held.set(update.carrierId, { update, since: from, until: Math.max(from + options.holdMs, from === t ? t : t + restartGraceMs), due: t, misses: 0 });
      return true;
    },
    /**
     * Up to `limit` of the reports due to be matched again, longest due first
     * (so those not tried yet come before those tried a moment ago), and what
     * is past its time (removed).
     */
    take(limit = Number.POSITIVE_INFINITY): { waiting: StatusUpdate[]; expired: StatusUpdate[] } {
      const t = now();
      const due: { update: StatusUpdate; due: number }[] = [];
      const expired: StatusUpdate[] = [];
      for (const [carrierId, entry] of held) {
        if (entry.until <= t) {
          held.delete(carrierId);
          expired.push(entry.update);
        } else if (entry.due <= t) due.push(entry);
      }
      if (due.length > limit) due.sort((a, b) => a.due - b.due);
      return { waiting: due.slice(0, limit).map((e) => e.update), expired };
    },
    /** Neither hot state nor history knows its carrier id yet: looked for again later, each time later still. */
    notFound(update: StatusUpdate): void {
      const entry = update.carrierId ? held.get(update.carrierId) : undefined;
      if (entry?.update !== update) return;
      // A submit naming it was recorded while this look ran (dueNow): due at once still, not after a longer wait.
      if (entry.nudged) {
        entry.nudged = false;
        return;
      }
      // Four tries half a second apart first: a receipt that overtook its submit's record is matched as soon as before.
      entry.misses++;
      entry.due = now() + Math.min(longestRetryMs, firstRetryMs * 2 ** Math.max(0, entry.misses - QUICK_TRIES));
    },
    /**
     * Submits naming these carrier ids were just recorded: the reports held for them are due at once, whatever
     * their waits had grown to. Whether any is held.
     */
    dueNow(carrierIds: Iterable<string>): boolean {
      let any = false;
      for (const carrierId of carrierIds) {
        const entry = held.get(carrierId);
        if (!entry) continue;
        entry.due = 0;
        entry.nudged = true;
        any = true;
      }
      return any;
    },
    /** Matched: no longer held, unless a later report for its carrier id replaced it meanwhile (false then). */
    release(update: StatusUpdate): boolean {
      if (!update.carrierId || held.get(update.carrierId)?.update !== update) return false;
      held.delete(update.carrierId);
      return true;
    },
    /** How long this report has been held, in milliseconds (0 when it is not held). */
    heldFor(update: StatusUpdate): number {
      const entry = update.carrierId ? held.get(update.carrierId) : undefined;
      return entry?.update === update ? now() - entry.since : 0;
    },
    get size(): number {
      return held.size;
    },
    /** Every report held now. */
    all(): StatusUpdate[] {
      return [...held.values()].map((entry) => entry.update);
    },
  };
}
