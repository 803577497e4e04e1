/**
 * Bytes allocated by function in the .heapprofile files that
 * bench/support/allocation-sampling.cjs writes, one table per process: self
 * (allocated in the function's own frame) and inclusive (in it or anything it
 * called, each stack counted once however often the function recurs).
 *
 *   npx tsx bench/support/allocation-top.ts <dir or files…> [--top 25] [--per 50000]
 *
 * `--per N` also prints bytes per unit of work (a message, a member).
 */
import fs from 'node:fs';
import path from 'node:path';

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  children?: HeapNode[];
}

const shortUrl = (url: string): string => {
  const u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('node_modules/');
  if (nm >= 0) return u.slice(nm + 'node_modules/'.length);
  const root = u.search(/\/(bin|lib|core|gateway|workers|proto|bench|test)\//);
  return root >= 0 ? u.slice(root + 1) : u;
};

export interface AllocationRow {
  name: string;
  selfBytes: number;
  inclusiveBytes: number;
}

/** Self and inclusive bytes by function (name and place) of one profile, largest inclusive first. */
export function summariseAllocations(head: HeapNode): { totalBytes: number; rows: AllocationRow[] } {
  const rows = new Map<string, AllocationRow>();
  let totalBytes = 0;
  const key = (n: HeapNode): string => {
    const f = n.callFrame;
    const where = f.url ? `${shortUrl(f.url)}:${f.lineNumber + 1}:${f.columnNumber + 1}` : '';
    return `${f.functionName || '(anonymous)'} ${where}`.trim();
  };
  const walk = (node: HeapNode, onStack: Set<string>): number => {
    const k = key(node);
    let row = rows.get(k);
    if (!row) rows.set(k, (row = { name: k, selfBytes: 0, inclusiveBytes: 0 }));
    row.selfBytes += node.selfSize;
    totalBytes += node.selfSize;
    const fresh = !onStack.has(k);
    if (fresh) onStack.add(k);
    let below = node.selfSize;
    for (const child of node.children ?? []) below += walk(child, onStack);
    if (fresh) {
      onStack.delete(k);
      row.inclusiveBytes += below;
    }
    return below;
  };
  walk(head, new Set());
  return { totalBytes, rows: [...rows.values()].sort((a, b) => b.inclusiveBytes - a.inclusiveBytes) };
}

function main(): void {
  const args = process.argv.slice(2);
  const flag = (name: string): number | undefined => {
    const i = args.indexOf(name);
    if (i < 0) return undefined;
    const v = Number(args[i + 1]);
    args.splice(i, 2);
    return v;
  };
  const top = flag('--top') ?? 25;
  const per = flag('--per');
  const files = args.flatMap((a) =>
    fs.statSync(a).isDirectory()
      ? fs
          .readdirSync(a)
          .filter((f) => f.endsWith('.heapprofile'))
          .map((f) => path.join(a, f))
      : [a],
  );
  const mb = (b: number): string => (b / 1e6).toFixed(1);
  for (const file of files) {
    const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as { head: HeapNode; argv?: string[] };
    const { totalBytes, rows } = summariseAllocations(profile.head);
    console.log(`\n${path.basename(file)}: ${mb(totalBytes)} MB allocated${per ? `, ${(totalBytes / per / 1000).toFixed(2)} KB per unit` : ''}`);
    console.log('inclusive MB  share  self MB  function');
    for (const r of rows.slice(0, top))
      console.log(
        `${mb(r.inclusiveBytes).padStart(12)}  ${((100 * r.inclusiveBytes) / totalBytes).toFixed(1).padStart(5)}%  ${mb(r.selfBytes).padStart(7)}  ${r.name}`,
      );
    console.log('\nself MB  share  function');
    for (const r of [...rows].sort((a, b) => b.selfBytes - a.selfBytes).slice(0, top))
      console.log(`${mb(r.selfBytes).padStart(7)}  ${((100 * r.selfBytes) / totalBytes).toFixed(1).padStart(5)}%  ${r.name}`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) main();
