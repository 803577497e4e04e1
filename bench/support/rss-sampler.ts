import fs from 'node:fs';
import { processRoles } from './process-roles';

export const MB = 1024 * 1024;

/** VmRSS of one process, 0 once it is gone. */
export function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Pss of one process (its private pages, plus each shared page divided by the
 * processes mapping it), 0 once it is gone. Summed over hermod's processes it
 * counts the node binary and other shared libraries once, where summed RSS
 * counts them once per process.
 */
export function pssBytes(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export type RssSampler = ReturnType<typeof createRssSampler>;

/**
 * Samples the summed RSS of the process tree under `root` every 250 ms, and
 * each role's own peak (core, gateway, supervisor, …) to show where the
 * memory is; with no root it samples nothing.
 */
export function createRssSampler(root: number | undefined) {
  let now = 0;
  let peak = 0;
  let phasePeak = 0;
  const rolePeaks = new Map<string, number>();
  const sample = (): void => {
    if (root === undefined) return;
    now = 0;
    const byRole = new Map<string, number>();
    for (const { pid, role } of processRoles(root)) {
      const bytes = rssBytes(pid);
      now += bytes;
      byRole.set(role, (byRole.get(role) ?? 0) + bytes);
    }
    for (const [role, bytes] of byRole) rolePeaks.set(role, Math.max(rolePeaks.get(role) ?? 0, bytes));
    peak = Math.max(peak, now);
    phasePeak = Math.max(phasePeak, now);
  };
  const timer = setInterval(sample, 250);
  return {
    enabled: root !== undefined,
    /** Starts a phase; returns a function giving the phase's peak so far. */
    phase(): () => number {
      sample();
      phasePeak = now;
      return () => (sample(), phasePeak);
    },
    now: () => now,
    peak: () => peak,
    /** Each role's own peak over the run (the peaks need not be at the same moment). */
    rolePeaks: (): ReadonlyMap<string, number> => rolePeaks,
    stop: () => clearInterval(timer),
  };
}
