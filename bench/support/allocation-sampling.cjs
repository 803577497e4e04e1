/**
 * Preload (`node --require`) that samples every allocation of a process, the
 * ones the collectors freed included, and writes a .heapprofile when it exits:
 * where the garbage comes from, which `--heap-prof` (live objects only) does
 * not say. Read the files with bench/support/allocation-top.ts.
 *
 *   BENCH_ALLOC_DIR=/tmp/alloc BENCH_NODE_ARGS="--require $PWD/bench/support/allocation-sampling.cjs" \
 *     BENCH_MEMBERS=50000 npx tsx bench/campaign-bench.ts
 *
 * BENCH_ALLOC_INTERVAL is the mean bytes between samples (default 32768).
 * BENCH_ALLOC_PROMOTED=1 leaves out what the profiler saw the young
 * generation's collections free: what is left leans to what outlived a
 * scavenge (where survivors come from), but over-counts them about twofold (why
 * was not found): take how much from `--trace-gc-nvp` (bench/RESULTS.md, 53rd session).
 */
const fs = require('node:fs');
const path = require('node:path');
const inspector = require('node:inspector');
const { threadId } = require('node:worker_threads');

const dir = process.env.BENCH_ALLOC_DIR;
if (dir && threadId === 0) {
  const session = new inspector.Session();
  session.connect();
  const interval = Number(process.env.BENCH_ALLOC_INTERVAL ?? 32768);
  session.post('HeapProfiler.startSampling', {
    samplingInterval: interval,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: process.env.BENCH_ALLOC_PROMOTED !== '1',
  });
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    // The main thread's session answers synchronously.
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (err) return;
      fs.mkdirSync(dir, { recursive: true });
      // hermod's roles name themselves in HERMOD_ROLE (core, gateway); the supervisor does not.
      const role = process.env.HERMOD_ROLE ?? path.basename(process.argv[1] ?? 'node');
      const file = path.join(dir, `${role}-${process.pid}.heapprofile`);
      fs.writeFileSync(file, JSON.stringify({ ...result.profile, interval, argv: process.argv.slice(1) }));
    });
  };
  process.on('exit', write);
}
