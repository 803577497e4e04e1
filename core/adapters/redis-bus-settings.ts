import type { Logger } from '../../lib/log';
import type { RedisConnectionOptions } from './redis-connection';

export interface RedisBusOptions {
  redis: RedisConnectionOptions;
  /** The role's logger (its lines then say which process wrote them); else one of the bus's own. */
  log?: Logger;
  /** Partitions (streams) per topic (default 8). Every process on a topic must agree on it. */
  partitions?: number;
  /** First part of every key (default `hermod`). */
  prefix?: string;
  /**
   * A pending entry idle this long counts as abandoned by its consumer and may
   * be claimed by the partition's next owner (default 5 s). A handler that
   * holds one batch longer than this is treated as stuck: its member stops
   * renewing that partition's lease, so the partition moves on without it.
   */
  claimIdleMs?: number;
  /** Longest wait of one blocking read (default 1 s). */
  blockMs?: number;
  /** Also trim each partition stream to about this many entries on publish (XADD MAXLEN ~), acknowledged or not; default: off. */
  maxLen?: number;
  /** How often the owner of a partition trims what every group of its stream has acknowledged (default 5 s). */
  trimEveryMs?: number;
  /** Acknowledged entries younger than this stay, so a group created just after a publish still sees it (default 10 s). */
  keepAcknowledgedMs?: number;
  /** Lifetime of a partition lease and of a group membership without renewal (default 5 s). */
  leaseMs?: number;
  /** How often members renew leases and rebalance partitions (default leaseMs / 3). */
  renewEveryMs?: number;
  /** Wait before a batch whose handler rejected is handed out again; doubles per failure in a row (default 50 ms). */
  retryDelayMs?: number;
  /** Longest wait between redeliveries (default 2 s). */
  maxRetryDelayMs?: number;
  /** How long Subscription.close waits for the batches its handler holds to settle (default 10 s). */
  closeTimeoutMs?: number;
}

/** RedisBusOptions with every default filled in and every value brought into range, read once by createRedisBus. */
export interface RedisBusSettings {
  readonly partitions: number;
  readonly prefix: string;
  readonly claimIdleMs: number;
  readonly blockMs: number;
  /** XADD MAXLEN ~ on publish, or none. */
  readonly maxLen: number | undefined;
  readonly leaseMs: number;
  readonly renewEveryMs: number;
  readonly retryDelayMs: number;
  readonly maxRetryDelayMs: number;
  readonly closeTimeoutMs: number;
  readonly trimEveryMs: number;
  readonly keepAcknowledgedMs: number;
}

export function resolveRedisBusSettings(options: Omit<RedisBusOptions, 'redis'>): RedisBusSettings {
  const leaseMs = Math.max(50, options.leaseMs ?? 5000);
  return Object.freeze({
    partitions: Math.max(1, Math.trunc(options.partitions ?? 8)),
    prefix: options.prefix ?? 'hermod',
    claimIdleMs: Math.max(0, options.claimIdleMs ?? 5000),
    blockMs: Math.max(1, Math.trunc(options.blockMs ?? 1000)),
    maxLen: options.maxLen !== undefined ? Math.max(1, Math.trunc(options.maxLen)) : undefined,
    leaseMs,
    renewEveryMs: Math.max(10, options.renewEveryMs ?? Math.floor(leaseMs / 3)),
    retryDelayMs: options.retryDelayMs ?? 50,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 2000,
    closeTimeoutMs: options.closeTimeoutMs ?? 10_000,
    trimEveryMs: Math.max(10, options.trimEveryMs ?? 5000),
    keepAcknowledgedMs: Math.max(0, options.keepAcknowledgedMs ?? 10_000),
  });
}
