import path from 'node:path';
import type { AdaptersConfig, Config } from '../../lib/config';
import type { Logger } from '../../lib/log';
import type { Bus } from '../ports/bus';
import type { History } from '../ports/history';
import type { HotState } from '../ports/state';
import { createJournaledHistory } from '../history/journaled-history';
import { withFailedBatchCount } from './failed-batch-count';

/**
 * The one place that turns configuration into adapters. Everything above the
 * ports is the same code whichever engines are chosen.
 */
export async function openBus(a: AdaptersConfig, log?: Logger): Promise<Bus> {
  return withFailedBatchCount(await openBusOf(a, log), log);
}

async function openBusOf(a: AdaptersConfig, log?: Logger): Promise<Bus> {
  switch (a.bus) {
    case 'memory':
      return (await import('./memory-bus')).createMemoryBus({ partitions: a.busPartitions });
    case 'redis':
      // resolveConfig refuses HERMOD_BUS=redis with HERMOD_REDIS_CLUSTER, so redisUrl is the one Redis here.
      return (await import('./redis-bus')).createRedisBus({ redis: a.redisUrl, prefix: a.redisPrefix, partitions: a.busPartitions, log });
    case 'kafka':
      return (await import('./kafka-bus')).createKafkaBus({
        brokers: a.kafkaBrokers,
        partitions: a.busPartitions,
        replicationFactor: a.kafkaReplicationFactor > 0 ? a.kafkaReplicationFactor : undefined,
        createTopics: a.kafkaCreateTopics,
        sessionTimeoutMs: a.kafkaSessionTimeoutMs,
        log,
      });
  }
}

/**
 * `keepAnswersIn`: with the in-process state, a data directory where the
 * answers of Idempotency-Keys are kept across restarts (core's own state; a
 * worker's is not asked for them).
 */
export async function openState(a: AdaptersConfig, keepAnswersIn?: { dataDir: string; fsync: boolean; log: Logger }, log?: Logger): Promise<HotState> {
  switch (a.state) {
    case 'memory':
      return (await import('./memory-state')).createMemoryState({
        finalTtlMs: a.stateFinalTtlMs,
        keyedFinalTtlMs: a.keyedFinalTtlMs,
        ...(keepAnswersIn
          ? {
              idempotencyFile: path.join(keepAnswersIn.dataDir, 'state', 'idempotency-keys.jsonl'),
              fsync: keepAnswersIn.fsync,
              onFileError: (err: unknown) => keepAnswersIn.log.error('could not keep an Idempotency-Key answer on disk (kept in memory only)', { err }),
            }
          : {}),
      });
    case 'redis':
      return (await import('./redis-state')).createRedisState({
        redis: a.redisCluster ? { cluster: a.redisCluster } : a.redisUrl,
        prefix: a.redisPrefix,
        waitReplicas: a.redisWaitReplicas,
        waitTimeoutMs: a.redisWaitTimeoutMs,
        commandTimeoutMs: a.redisCommandTimeoutMs,
        finalTtlSeconds: Math.max(1, Math.round(a.stateFinalTtlMs / 1000)),
        keyedFinalTtlSeconds: Math.max(1, Math.round(a.keyedFinalTtlMs / 1000)),
        log: log?.child({ component: 'redis-state' }),
      });
  }
}

/** History in its engine, behind this core's write-ahead journal in the data directory. */
export async function openHistory(config: Readonly<Config>, log: Logger): Promise<History> {
  const a = config.adapters;
  const inner =
    a.history === 'chdb'
      ? await (await import('./chdb-history')).createChdbHistory({
          dataDir: config.dataDir,
          maxMemoryBytes: a.chdbMaxMemoryBytes,
          cacheBytes: a.chdbCacheBytes,
        })
      : await (await import('./clickhouse-history')).createClickHouseHistory({ url: a.clickhouseUrl, database: a.clickhouseDatabase || undefined });
  return createJournaledHistory({
    inner,
    dir: path.join(config.dataDir, 'journal'),
    log,
    flushIntervalMs: config.historyFlushMs,
    fsync: config.journalFsync,
  });
}
