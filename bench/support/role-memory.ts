import { processRoles } from './process-roles';
import { rssBytes } from './rss-sampler';

/** RSS of every process under `root`, summed by role (`core`, `gateway 0`, `core (esbuild)`, …), and the total. */
export function roleMemory(root: number): { total: number; byRole: Record<string, number> } {
  const byRole: Record<string, number> = {};
  let total = 0;
  for (const { pid, role } of processRoles(root)) {
    const rss = rssBytes(pid);
    byRole[role] = (byRole[role] ?? 0) + rss;
    total += rss;
  }
  return { total, byRole };
}
