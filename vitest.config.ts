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

// Three projects so the quick suite stays quick: unit tests sit beside the code,
// end-to-end and multi-process tests live under test/, engine suites on their own.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['{lib,gateway,core,workers,proto,bench}/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...ENGINE_SUITES],
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
          fileParallelism: false,
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
