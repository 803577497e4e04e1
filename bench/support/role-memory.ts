import { processRoles } from './process-roles';
import { pssBytes, rssBytes } from './rss-sampler';

/**
 * RSS of every process under `root`, summed by role (`core`, `gateway 0`,
 * `core (esbuild)`, …), the total, and the total Pss (shared pages counted
 * once over all the processes, not once in each).
 */
export function roleMemory(root: number): { total: number; pss: number; byRole: Record<string, number> } {
  const byRole: Record<string, number> = {};
  let total = 0;
  let pss = 0;
  for (const { pid, role } of processRoles(root)) {
    const rss = rssBytes(pid);
    byRole[role] = (byRole[role] ?? 0) + rss;
    total += rss;
    pss += pssBytes(pid);
  }
  return { total, pss, byRole };
}
