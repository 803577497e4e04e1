import fs from 'node:fs';
import { processTree } from './process-tree';

/** The `node bin/hermod.js start` this process spawned (startHermod does not expose its pid). */
export function hermodPid(): number | undefined {
  return processTree(process.pid).find((p) => p !== process.pid && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('bin/hermod.js'));
}
