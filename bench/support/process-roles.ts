import fs from 'node:fs';
import { processTree } from './process-tree';

/** Every process under `root` (root included) with the role it runs (`HERMOD_ROLE`, or its command). */
export function processRoles(root: number): { pid: number; role: string }[] {
  return processTree(root).map((pid) => {
    let role = 'supervisor';
    try {
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const r = env.find((e) => e.startsWith('HERMOD_ROLE='))?.slice('HERMOD_ROLE='.length);
      const i = env.find((e) => e.startsWith('HERMOD_ROLE_INDEX='))?.slice('HERMOD_ROLE_INDEX='.length);
      if (r) role = r === 'gateway' ? `gateway ${i ?? ''}`.trim() : r;
    } catch {
      /* gone */
    }
    return { pid, role };
  });
}
