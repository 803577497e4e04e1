/**
 * What grew between two V8 heap snapshots of one process (node
 * --heapsnapshot-signal=SIGUSR2, then `kill -USR2 <pid>` twice, minutes
 * apart): live objects counted and their own sizes summed by kind and
 * constructor, the largest changes first. A snapshot is taken after a full
 * collection, so it holds only what is reachable.
 *
 *   npx tsx bench/support/heap-snapshot-diff.ts <earlier.heapsnapshot> <later.heapsnapshot> [--top 30]
 */
import fs from 'node:fs';

interface Totals {
  count: number;
  bytes: number;
}

function totalsOf(file: string): { byName: Map<string, Totals>; all: Totals } {
  const snapshot = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const byName = new Map<string, Totals>();
  const all: Totals = { count: 0, bytes: 0 };
  const { nodes, strings } = snapshot;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]!]!;
    // Strings and code are told by kind; objects by constructor name.
    const name = type === 'object' || type === 'closure' ? `${type} ${strings[nodes[i + nameAt]!]}` : type;
    const size = nodes[i + sizeAt]!;
    const t = byName.get(name) ?? { count: 0, bytes: 0 };
    t.count++;
    t.bytes += size;
    byName.set(name, t);
    all.count++;
    all.bytes += size;
  }
  return { byName, all };
}

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args[topAt + 1]) : 30;
const [earlierFile, laterFile] = args.filter((a, i) => !a.startsWith('--') && i !== topAt + 1);
if (!earlierFile || !laterFile) throw new Error('usage: heap-snapshot-diff.ts <earlier.heapsnapshot> <later.heapsnapshot> [--top 30]');
const earlier = totalsOf(earlierFile);
const later = totalsOf(laterFile);
const MB = 1024 * 1024;
console.log(
  `live heap: ${(earlier.all.bytes / MB).toFixed(1)} MB in ${earlier.all.count} objects → ${(later.all.bytes / MB).toFixed(1)} MB in ${later.all.count}`,
);
const names = new Set([...earlier.byName.keys(), ...later.byName.keys()]);
const rows = [...names]
  .map((name) => {
    const a = earlier.byName.get(name) ?? { count: 0, bytes: 0 };
    const b = later.byName.get(name) ?? { count: 0, bytes: 0 };
    return { name, a, b, grew: b.bytes - a.bytes };
  })
  .sort((x, y) => Math.abs(y.grew) - Math.abs(x.grew))
  .slice(0, top);
console.log('| kind / constructor | objects before → after | MB before → after | change MB |');
console.log('|---|---:|---:|---:|');
for (const r of rows) {
  console.log(
    `| ${r.name.replace(/\|/g, '\\|')} | ${r.a.count} → ${r.b.count} | ${(r.a.bytes / MB).toFixed(2)} → ${(r.b.bytes / MB).toFixed(2)} | ${(r.grew / MB).toFixed(2)} |`,
  );
}
