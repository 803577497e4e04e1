/**
 * What the campaign report's copies cost at the size of its gRPC messages,
 * under the glibc malloc settings `hermod start` gives its processes
 * (lib/malloc-env.ts): a million-row report is about 193 MB of JSON, copied
 * twice in core (the protobuf field, then grpc-js's frame) in pieces of
 * REPORT_BYTES. The baseline, in the same run, is the same copies in 256 KiB
 * pieces, the size before the twelfth session: above the 128 KiB mmap
 * threshold each copy is a fresh mapping, faulted in page by page.
 *
 *   npx tsx bench/report-copy-bench.ts
 *
 * Knobs: BENCH_MB of report to copy (193), BENCH_ROUNDS alternated (2).
 */
import { spawnSync } from 'node:child_process';
import { MALLOC_DEFAULTS } from '../lib/malloc-env';
import { REPORT_BYTES } from '../core/grpc/campaigns-service';
import { printTable } from './support/print-table';

const totalBytes = Number(process.env.BENCH_MB ?? 193) * 1024 * 1024;
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const BEFORE = 256 * 1024;

if (process.env.MALLOC_MMAP_THRESHOLD_ === undefined) {
  // glibc reads these when the process starts: run again with them, as hermod start does.
  const run = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, ...MALLOC_DEFAULTS } });
  process.exit(run.status ?? 1);
}

/** CPU ms (user, system) to copy `totalBytes` out of an engine-sized block in pieces of `piece` bytes, twice each. */
function copyAll(piece: number): { user: number; system: number } {
  const block = Buffer.alloc(12 * 1024 * 1024, '{"list_name":"Hui ā-tau 👋🏽","message_id":4096000}');
  const before = process.cpuUsage();
  let check = 0;
  for (let done = 0; done < totalBytes; done += piece) {
    const at = done % (block.length - piece);
    const field = Buffer.allocUnsafe(piece + 4);
    field.set(block.subarray(at, at + piece), 4);
    const frame = Buffer.allocUnsafe(piece + 9);
    field.copy(frame, 5);
    check += frame[5 + (done % piece)]!;
  }
  const used = process.cpuUsage(before);
  if (check === 0) throw new Error('nothing copied');
  return { user: used.user / 1000, system: used.system / 1000 };
}

const rows: string[][] = [];
for (let r = 0; r < rounds; r++) {
  for (const [what, piece] of [
    ['baseline: 256 KiB pieces (before)', BEFORE],
    [`REPORT_BYTES: ${REPORT_BYTES / 1024} KiB pieces (now)`, REPORT_BYTES],
  ] as const) {
    const { user, system } = copyAll(piece);
    rows.push([what, (user + system).toFixed(0), system.toFixed(0)]);
  }
}
console.log(`${totalBytes / 1024 / 1024} MB copied twice, MALLOC_MMAP_THRESHOLD_=${process.env.MALLOC_MMAP_THRESHOLD_}, node ${process.version}`);
printTable([{ title: 'pieces' }, { title: 'CPU ms', align: 'right' }, { title: 'of which system ms', align: 'right' }], rows);
