import { matchBlock } from '../domain/block-prefix';
import type { HotState } from '../ports/state';

type Screening = Pick<HotState, 'takeQuota' | 'setBlocks' | 'findBlocks'>;

/**
 * Quota counters and block lists of the in-memory hot state. Everything runs
 * synchronously inside each call, so concurrent takes in this process never
 * interleave: a take is atomic by construction. Counters expire with their
 * period; block entries never do (core loads them from history at start).
 */
export function createMemoryScreening(now: () => number, open: () => void): Screening {
  const counters = new Map<string, { used: number; expires: number }>();
  const blocks = new Map<string, Set<string>>();
  return {
    async takeQuota(takes) {
      open();
      const t = now();
      return takes.map((take) => {
        let counter = counters.get(take.key);
        if (!counter || counter.expires <= t) {
          // Passed periods are worth nothing: drop them whenever a new one starts.
          for (const [k, c] of counters) if (c.expires <= t) counters.delete(k);
          counter = { used: Math.max(0, Math.floor(take.seed ?? 0)), expires: t + take.ttlMs };
          counters.set(take.key, counter);
        }
        const granted = Math.max(0, Math.min(Math.floor(take.wanted), Math.floor(take.limit) - counter.used));
        counter.used += granted;
        return granted;
      });
    },
    async setBlocks(entries) {
      open();
      for (const e of entries) {
        const set = blocks.get(e.scope) ?? new Set<string>();
        if (e.blocked) set.add(e.prefix);
        else set.delete(e.prefix);
        blocks.set(e.scope, set);
      }
    },
    async findBlocks(sends) {
      open();
      const global = blocks.get('');
      return sends.map((s) => {
        const own = blocks.get(s.applicationId);
        return matchBlock(s.destination, (p) => (global?.has(p) ?? false) || (own?.has(p) ?? false));
      });
    },
  };
}
