import fs from 'node:fs';
import { processTree } from './process-tree';

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

export type RssSampler = ReturnType<typeof createRssSampler>;

/** Samples the summed RSS of the process tree under `root` every 250 ms; with no root it samples nothing. */
export function createRssSampler(root: number | undefined) {
  let now = 0;
  let peak = 0;
  let phasePeak = 0;
  const sample = (): void => {
    if (root === undefined) return;
    now = processTree(root).reduce((sum, pid) => sum + rssBytes(pid), 0);
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
    stop: () => clearInterval(timer),
  };
}
