/**
 * Self time by function in V8 .cpuprofile files (node --cpu-prof), one table
 * per process. Frames are keyed by function name and file:line so the same
 * function seen from different call paths adds up; the GC, idle and program
 * pseudo-frames are kept, since they are part of where the time goes.
 *
 *   npx tsx bench/support/cpu-profile-top.ts <dir or files…> [--top 25] [--roles roles.json] [--last 12]
 *
 * roles.json maps a pid to its role ({"1234": "core"}), as written by
 * bench/acceptance-profile.ts; without it the pid names the process. Thread 0
 * is the main thread; others are worker threads (tsx's loader, callback
 * delivery…). `--last S` counts only the last S seconds of each profile (a
 * profile ends when its process exits): the load, not the start-up.
 * Functions are as V8 saw them: tsx compiles each module to one line, so a
 * nameless function is told by its column.
 */
import fs from 'node:fs';
import path from 'node:path';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface FunctionTime {
  name: string;
  where: string;
  selfMs: number;
  share: number;
}

export interface ProcessProfile {
  file: string;
  pid: number;
  /** Node's thread id: 0 is the main thread. */
  thread: number;
  totalMs: number;
  /** Sampled time not in (idle): the process's CPU, roughly. */
  busyMs: number;
  functions: FunctionTime[];
  /** Self time by file (node internals and packages collapsed), to see which module dominates. */
  files: FunctionTime[];
}

const shortUrl = (url: string): string => {
  if (!url) return '';
  const u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('node_modules/');
  if (nm >= 0) return u.slice(nm + 'node_modules/'.length);
  const root = u.search(/\/(bin|lib|core|gateway|workers|proto|bench|test)\//);
  return root >= 0 ? u.slice(root + 1) : u;
};

const packageOf = (url: string): string => {
  const s = shortUrl(url);
  if (!s) return '(native/VM)';
  if (s.startsWith('node:')) return s;
  const parts = s.split('/');
  if (url.includes('node_modules/')) return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  return s;
};

/** Self time per function and per file of one profile, using the sample time deltas. */
export function summariseProfile(file: string, lastS?: number): ProcessProfile {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  const from = lastS === undefined ? Number.NEGATIVE_INFINITY : p.endTime - lastS * 1e6;
  // timeDeltas[i] is the time before sample i; the time until the next sample is sample i's, as DevTools counts it.
  let at = p.startTime;
  for (let i = 0; i < samples.length; i += 1) {
    at += deltas[i] ?? 0;
    if (at < from) continue;
    const next = deltas[i + 1] ?? 0;
    selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + Math.max(0, next));
  }
  const fns = new Map<string, { name: string; where: string; us: number }>();
  const files = new Map<string, { name: string; where: string; us: number }>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const n = byId.get(id);
    if (!n) continue;
    totalUs += us;
    const name = n.callFrame.functionName || '(anonymous)';
    if (name === '(idle)') idleUs += us;
    const cf = n.callFrame;
    const where = cf.url ? `${shortUrl(cf.url)}:${cf.lineNumber + 1}:${cf.columnNumber + 1}` : '';
    const key = `${name}\0${where}`;
    const f = fns.get(key) ?? { name, where, us: 0 };
    f.us += us;
    fns.set(key, f);
    const pkg = n.callFrame.url ? packageOf(n.callFrame.url) : name.startsWith('(') ? name : '(native/VM)';
    const g = files.get(pkg) ?? { name: pkg, where: '', us: 0 };
    g.us += us;
    files.set(pkg, g);
  }
  const busyUs = totalUs - idleUs;
  const rank = (m: Map<string, { name: string; where: string; us: number }>): FunctionTime[] =>
    [...m.values()]
      .filter((f) => f.name !== '(idle)')
      .sort((a, b) => b.us - a.us)
      .map((f) => ({ name: f.name, where: f.where, selfMs: f.us / 1000, share: busyUs > 0 ? f.us / busyUs : 0 }));
  const ids = /\.(\d+)\.(\d+)\.\d+\.cpuprofile$/.exec(path.basename(file));
  const pid = Number(ids?.[1] ?? Number.NaN);
  const thread = Number(ids?.[2] ?? 0);
  return { file, pid, thread, totalMs: totalUs / 1000, busyMs: busyUs / 1000, functions: rank(fns), files: rank(files) };
}

/** Every .cpuprofile under `inputs` (directories or files). */
export function profileFiles(inputs: string[]): string[] {
  return inputs.flatMap((i) =>
    fs.statSync(i).isDirectory()
      ? fs
          .readdirSync(i)
          .filter((f) => f.endsWith('.cpuprofile'))
          .map((f) => path.join(i, f))
      : [i],
  );
}

/** The tables, busiest process first. */
export function formatProfiles(profiles: ProcessProfile[], roles: Record<string, string>, top: number): string {
  const out: string[] = [];
  for (const p of [...profiles].sort((a, b) => b.busyMs - a.busyMs)) {
    const role = roles[String(p.pid)] ?? 'process';
    const thread = p.thread === 0 ? 'main thread' : `thread ${p.thread}`;
    out.push(`## ${role} (pid ${p.pid}, ${thread}): ${(p.busyMs / 1000).toFixed(1)} s busy of ${(p.totalMs / 1000).toFixed(1)} s sampled`);
    out.push('  self ms    share  function');
    for (const f of p.functions.slice(0, top)) {
      out.push(`  ${f.selfMs.toFixed(0).padStart(7)}  ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.name} ${f.where}`);
    }
    out.push('  by module:');
    for (const f of p.files.slice(0, Math.ceil(top / 2))) {
      out.push(`  ${f.selfMs.toFixed(0).padStart(7)}  ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.name}`);
    }
    out.push('');
  }
  return out.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const args = process.argv.slice(2);
  const flag = (name: string): string | undefined => {
    const i = args.indexOf(name);
    if (i < 0) return undefined;
    const v = args[i + 1];
    args.splice(i, 2);
    return v;
  };
  const top = Number(flag('--top') ?? 25);
  const rolesFile = flag('--roles');
  const last = flag('--last');
  const roles = rolesFile ? (JSON.parse(fs.readFileSync(rolesFile, 'utf8')) as Record<string, string>) : {};
  if (args.length === 0) {
    console.error('usage: tsx bench/support/cpu-profile-top.ts <dir or .cpuprofile files…> [--top N] [--roles roles.json]');
    process.exit(2);
  }
  console.log(
    formatProfiles(
      profileFiles(args).map((f) => summariseProfile(f, last === undefined ? undefined : Number(last))),
      roles,
      top,
    ),
  );
}
