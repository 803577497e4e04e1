import fs from 'node:fs';
import { processTree } from './process-tree';

/**
 * Every process under `root` (root included) with the role it runs
 * (`HERMOD_ROLE`, a worker's `HERMOD_CHANNEL`); a helper process a role
 * started, such as tsx's esbuild service, inherits the role's environment and
 * is named `<role> (esbuild)` or `<role> (helper)`.
 */
export function processRoles(root: number): { pid: number; role: string }[] {
  return processTree(root).map((pid) => {
    let role = 'supervisor';
    try {
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const r = env.find((e) => e.startsWith('HERMOD_ROLE='))?.slice('HERMOD_ROLE='.length);
      const i = env.find((e) => e.startsWith('HERMOD_ROLE_INDEX='))?.slice('HERMOD_ROLE_INDEX='.length);
      const c = env.find((e) => e.startsWith('HERMOD_CHANNEL='))?.slice('HERMOD_CHANNEL='.length);
      if (r) role = r === 'gateway' ? `gateway ${i ?? ''}`.trim() : r === 'worker' && c ? `worker ${c}` : r;
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('hermod')) role += cmd.includes('esbuild') ? ' (esbuild)' : ' (helper)';
    } catch {
      /* gone */
    }
    return { pid, role };
  });
}
