import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The engines a deployment at scale runs on, started by the tests themselves:
 * Kafka brokers from Maven Central jars, a Redis Cluster, Debian's Prometheus,
 * and ClickHouse's HTTP interface (a stand-in executing in chDB). Without an
 * engine's tools a suite skips and says why, except in CI and under
 * `npm run test:engines`, where that is a failure.
 */
const ENGINE_SUITES = [
  'core/adapters/kafka-bus-3.test.ts',
  'core/adapters/kafka-bus-4.test.ts',
  'core/adapters/clickhouse-history.test.ts',
  'test/kafka/**/*.test.ts',
  'test/redis-cluster-state.test.ts',
  'test/prometheus-*.test.ts',
  'test/clickhouse-http-standin.test.ts',
  'test/history-on-clickhouse.test.ts',
];

/**
 * Unit files that need a process of their own: they install process-wide
 * state (the tracer, the metrics they count from zero) that another file run
 * before them in the same worker would have changed. Every other unit file
 * shares its worker with the files before it (`isolate: false`): a fresh
 * process per file cost the unit project a third of its time (204 s against
 * 135 s here, 2026-12-01), twice per CI run.
 */
const UNIT_ISOLATED = ['lib/tracing.test.ts', 'gateway/http/request-span.test.ts', 'gateway/http/client-closed.test.ts'];

/**
 * The files that take longest (brokers to start and fail over, hermod killed
 * and restarted under load), slowest first as measured: 15 s to 2 min each
 * beside other files. A clean clone has no vitest cache of durations, and file
 * size says little about a test that mostly waits: so these start first, and
 * the run does not end waiting on one of them while the quick files are done.
 * A file missing here only starts later. Order as measured in one whole run
 * (2026-11-28, `--reporter=json`: campaign control 120 s, the broker kill 112 s).
 */
const LONGEST_FIRST = [
  'test/campaign-control.test.ts',
  // A unit file, but the chDB engine's large reports take 100 s beside the others (2026-11-30).
  'core/adapters/chdb-history.test.ts',
  'test/kafka/broker-kill.test.ts',
  'core/adapters/kafka-bus-3.test.ts',
  'core/adapters/kafka-bus-4.test.ts',
  'test/kafka/multi-process-kafka.test.ts',
  'test/journal-unicode-restart.test.ts',
  'test/receipts-across-crash.test.ts',
  'test/durability.test.ts',
  'test/idempotency-after-core-crash.test.ts',
  'test/campaign-fanout.test.ts',
  'test/im-fallback.test.ts',
  'test/kafka/kafka-failover.test.ts',
  'test/intelligent-messaging.test.ts',
  'test/callbacks.test.ts',
  'test/operator-console.test.ts',
  'test/stop-by-process-group.test.ts',
  'test/kafka/start-on-kafka.test.ts',
  'test/campaign-control-redis.test.ts',
  'test/redis-cluster-state.test.ts',
  'test/fault-run.test.ts',
  'test/multi-process.test.ts',
  'gateway/core-client-reconnect.test.ts',
];

/** The files in an order drawn from the seed (a Park–Miller generator and a Fisher–Yates shuffle). */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed % 2_147_483_647 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 16_807) % 2_147_483_647;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** LONGEST_FIRST, then the end-to-end and engine files, then the unit tests that fill the gaps; otherwise vitest's order. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // HERMOD_TEST_SHUFFLE=<seed>: files in an order of that seed instead, to show a unit file that leans on another's state.
    const seed = Number(process.env.HERMOD_TEST_SHUFFLE);
    if (seed) return shuffled(files, seed);
    const rank = (spec: TestSpecification): number => {
      const listed = LONGEST_FIRST.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      if (listed >= 0) return listed;
      return LONGEST_FIRST.length + (spec.project.name === 'unit' ? 1 : 0);
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

// Three projects so the quick suite stays quick: unit tests sit beside the code,
// end-to-end and multi-process tests live under test/, engine suites on their own.
export default defineConfig({
  test: {
    // One pool for all three projects. Every file starts what it tests on port 0 with fresh
    // Redis prefixes, topics and data directories, so files run side by side; most of their
    // time is spent waiting on the processes they started, so more files than the CI
    // machine's two cores run at once (VITEST_MAX_WORKERS overrides).
    maxWorkers: 3,
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['{lib,gateway,core,workers,proto,bench}/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...ENGINE_SUITES, ...UNIT_ISOLATED],
          testTimeout: 20_000,
          isolate: false,
        },
      },
      {
        test: {
          name: 'unit-isolated',
          include: UNIT_ISOLATED,
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...ENGINE_SUITES],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'engines',
          include: ENGINE_SUITES,
          testTimeout: 180_000,
          hookTimeout: 180_000,
          // Engine suites side by side (they wait on brokers and failovers more than they compute).
          fileParallelism: true,
        },
      },
    ],
  },
});
