import fs from 'node:fs';
import os from 'node:os';
import { processRoles } from './process-roles';

/** /proc/<pid>/stat utime + stime, in clock ticks (100 per second on Linux). */
const TICKS_PER_S = 100;

function cpuTicks(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

const machineBusyMs = (): { busy: number; total: number } =>
  os.cpus().reduce(
    (a, c) => {
      const t = c.times;
      const busy = t.user + t.nice + t.sys + t.irq;
      return { busy: a.busy + busy, total: a.total + busy + t.idle };
    },
    { busy: 0, total: 0 },
  );

/** CPU use between start() and stop(), as % of one core: per hermod role, this process, and everything else. */
export function createCpuMeter(root: number | undefined) {
  const snapshot = () => ({
    at: performance.now(),
    machine: machineBusyMs(),
    self: cpuTicks(process.pid),
    roles: (root === undefined ? [] : processRoles(root)).map((p) => ({ ...p, ticks: cpuTicks(p.pid) })),
  });
  let first: ReturnType<typeof snapshot> | undefined;
  return {
    start: () => void (first = snapshot()),
    stop(): { label: string; percent: number }[] {
      const last = snapshot();
      if (!first) return [];
      const seconds = (last.at - first.at) / 1000;
      const pct = (ticks: number): number => (100 * ticks) / TICKS_PER_S / seconds;
      // Helpers a role starts (tsx's esbuild service) inherit its HERMOD_ROLE and are counted with it.
      const byRole = new Map<string, number>();
      let ours = last.self - first.self;
      for (const p of last.roles) {
        const used = p.ticks - (first.roles.find((q) => q.pid === p.pid)?.ticks ?? 0);
        ours += used;
        byRole.set(p.role, (byRole.get(p.role) ?? 0) + used);
      }
      const rows = [...byRole].map(([role, ticks]) => ({ label: `hermod ${role}`, percent: pct(ticks) }));
      rows.push({ label: 'this bench process (load, receiver, SMSC simulator)', percent: pct(last.self - first.self) });
      const machineBusyS = (last.machine.busy - first.machine.busy) / 1000;
      rows.push({ label: 'everything else on the machine', percent: Math.max(0, (100 * machineBusyS) / seconds - pct(ours)) });
      rows.push({
        label: `machine total (${os.availableParallelism()} cores = ${os.availableParallelism() * 100} %)`,
        percent: (100 * machineBusyS) / seconds,
      });
      return rows;
    },
  };
}
