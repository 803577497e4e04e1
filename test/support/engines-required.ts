/**
 * Engine suites (Kafka, Redis Cluster, Prometheus) skip with a printed reason
 * where their engine cannot run, except in CI and under `npm run
 * test:engines`, where a skipped engine would hide a regression.
 */
export const enginesRequired = Boolean(process.env.CI || process.env.REQUIRE_ENGINES);
