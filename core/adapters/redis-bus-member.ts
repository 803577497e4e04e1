import type { Redis } from 'ioredis';
import type { Logger } from '../../lib/log';
import type { RedisBusSettings } from './redis-bus-settings';

/** One partition held (or being handed back) by a subscription. */
export interface Part {
  readonly partition: number;
  readonly key: string;
  readonly lease: string;
  /** idle: waits in the blocking read; busy: its worker runs; releasing: being handed back. */
  state: 'idle' | 'busy' | 'releasing';
  /** claim: take over others' pending entries; pending: re-read our own; live: read new entries. */
  mode: 'claim' | 'pending' | 'live';
  /** Hand it back once the batch in hand is done (rebalance). */
  wantRelease: boolean;
  /** The lease is someone else's now: stop without touching the partition. */
  lost: boolean;
  /** The handler held a batch past claimIdleMs: the lease is left to expire. */
  abandoned: boolean;
  /** When the handler got the batch it holds, if it holds one. */
  handlingSince: number | undefined;
  /**
   * Until when the lease is surely ours (local clock, counted from before the
   * last successful SET or renewal was sent). Past it the partition is not
   * consumed, so a member cut off from Redis stops before another takes over.
   */
  validUntil: number;
}

/**
 * One subscription as a member of its group, as the parts of it see it (its
 * leases, its reads, its partition workers, its blocking read): who it is,
 * the partitions it holds, and how it pauses and stops.
 */
export interface Member {
  readonly cmd: Redis;
  readonly settings: RedisBusSettings;
  readonly topic: string;
  readonly group: string;
  readonly consumer: string;
  /** This subscription's identity in leases and membership (unique even if a consumer name is reused). */
  readonly token: string;
  readonly maxBatch: number;
  /** Batches of one partition its handler may hold at once (SubscribeOptions.inFlight). */
  readonly inFlight: number;
  readonly log: Logger;
  /** The bus's own logger, without the subscription's fields: for what is about a connection (one line for a process's connections). */
  readonly busLog: Logger;
  readonly parts: Map<number, Part>;
  /** Set when close begins: take nothing new. */
  readonly closing: boolean;
  /** Set once close has given up on the workers: nothing may touch Redis any more. */
  readonly dead: boolean;
  /** The lease is someone else's, or may be by now. */
  expired(part: Part): boolean;
  /** Forgets a partition (if it is still this one). */
  drop(part: Part): void;
  /** Makes the blocking read look at the partitions again. */
  wakeReader(): void;
  /** A sleep that close() cuts short. */
  pause(ms: number): Promise<void>;
  /** The wait after `failures` failures in a row. */
  backoff(failures: number): number;
}
