import type { HotState } from '../../core/ports/state';

/** Slots per second: a carrier's allowance is handed out in twentieths, so no sliding second holds more than limit + limit/20. */
const SLOTS = 20;
const SLOT_MS = 1000 / SLOTS;

/** The share of `limit` that slot `i` (0..19) of a second may use; the shares of one second add up to `limit`. */
export function slotShare(limit: number, i: number): number {
  return Math.floor(((i + 1) * limit) / SLOTS) - Math.floor((i * limit) / SLOTS);
}

/**
 * A carrier's submits per second, shared by every SMS worker through hot
 * state. Each 50 ms slot has its own counter (keyed by the slot, so it ends
 * with the slot), holding a twentieth of the limit: whatever second one
 * looks at, at most `limit` plus one slot's share get through — 105 for a
 * limit of 100. Waiters of this process ask together, one round trip per
 * slot, first come first served; an allowance that arrives after its slot
 * ended is given up (throughput lost rather than the bound).
 */
export function createSubmitRate(state: HotState, carrier: string, maxPerSecond: number, now: () => number = Date.now) {
  // Hands out 95 % of the carrier's maximum: a submit written at the very end of its slot reaches the
  // carrier a few milliseconds later, beside the next slot's first ones, and what the carrier counts is
  // what arrives. The headroom keeps that jitter under its maximum too (test/carriers.test.ts measures
  // at the simulator: 109 in a sliding second without it, at a limit of 100).
  const limit = Math.max(1, Math.floor(maxPerSecond * 0.95));
  const waiting: { n: number; resolve(slot: number): void; reject(err: unknown): void }[] = [];
  let pumping = false;

  const pump = async (): Promise<void> => {
    if (pumping) return;
    pumping = true;
    try {
      while (waiting.length > 0) {
        const t = now();
        const slot = Math.floor(t / SLOT_MS);
        const share = slotShare(limit, slot % SLOTS);
        let granted = 0;
        if (share > 0) {
          const want = Math.min(
            share,
            waiting.reduce((sum, w) => sum + w.n, 0),
          );
          try {
            granted = (await state.takeRateTokens(`carrier:${carrier}:${slot}`, share, want)).granted;
          } catch (err) {
            for (const w of waiting.splice(0)) w.reject(err);
            return;
          }
          // An answer that comes back after its slot has ended is not used: spent in the next slot, beside
          // that slot's own share (taken by this worker or another), it would let a second hold more than the bound.
          if (Math.floor(now() / SLOT_MS) !== slot) granted = 0;
        }
        // Whole messages only, in order; a message of more parts than a slot holds takes them slot by slot.
        while (granted > 0 && waiting.length > 0) {
          const w = waiting[0]!;
          const used = Math.min(w.n, granted);
          w.n -= used;
          granted -= used;
          if (w.n === 0) {
            waiting.shift();
            w.resolve(slot);
          }
        }
        if (waiting.length > 0) await new Promise((r) => setTimeout(r, Math.max(1, (slot + 1) * SLOT_MS - now())));
      }
    } finally {
      pumping = false;
    }
  };

  return {
    /**
     * Resolves once `n` submits may go to the carrier, with the slot they were
     * granted in: they must leave within it (see inSlot), or be asked for again.
     */
    take(n: number): Promise<number> {
      return new Promise<number>((resolve, reject) => {
        waiting.push({ n, resolve, reject });
        void pump();
      });
    },
    /**
     * Whether submits granted in `slot` may still leave now. One written after
     * its slot, beside the next slot's own share, would let a second hold more
     * than the bound: a submit that waited (a full window, a busy thread) is
     * withdrawn unsent and takes a new allowance.
     */
    inSlot: (slot: number): boolean => Math.floor(now() / SLOT_MS) === slot,
  };
}
