import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { BatchHandler, DeliveredRecord, SubscribeOptions } from '../ports/bus';
import type { Logger } from '../../lib/log';
import { streamKey } from './redis-bus-keys';
import { PartitionLeases } from './redis-bus-leases';
import type { Member, Part } from './redis-bus-member';
import { PartitionWorker } from './redis-bus-partition-worker';
import { ReadLoop } from './redis-bus-read-loop';
import { PartitionReads } from './redis-bus-reads';
import type { RedisBusSettings } from './redis-bus-settings';

const DEFAULT_MAX_BATCH = 256;

/**
 * One subscription to a topic on the Redis bus, a member of its group: its
 * leases (renewed and rebalanced every renewEveryMs), its blocking read, the
 * workers of the partitions it holds, and an orderly close that lets the
 * handler finish and hands every partition back.
 */
export class RedisBusSubscriber implements Member {
  onClosed?: () => void;

  readonly group: string;
  readonly consumer: string;
  readonly token: string;
  readonly maxBatch: number;
  readonly inFlight: number;
  readonly log: Logger;
  readonly busLog: Logger;
  readonly parts = new Map<number, Part>();
  closing = false;
  dead = false;

  private readonly reads: PartitionReads;
  private readonly leases: PartitionLeases;
  private readonly worker: PartitionWorker;
  private readonly readLoop: ReadLoop;
  private readonly workers = new Set<Promise<void>>();
  private readonly sleepers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private tickTimer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private readDone: Promise<void> | undefined;
  private closed: Promise<void> | undefined;

  constructor(
    readonly cmd: Redis,
    readonly settings: RedisBusSettings,
    readonly topic: string,
    handler: BatchHandler,
    options: SubscribeOptions,
    log: Logger,
  ) {
    this.group = options.group;
    this.consumer = options.consumer ?? `consumer-${randomUUID()}`;
    this.token = `${this.consumer}#${randomUUID().slice(0, 8)}`;
    this.maxBatch = Math.max(1, Math.trunc(options.maxBatch ?? DEFAULT_MAX_BATCH));
    this.inFlight = Math.max(1, Math.trunc(options.inFlight ?? 1));
    const keys = Array.from({ length: settings.partitions }, (_, p) => streamKey(settings.prefix, topic, p));
    this.log = log.child({ topic, group: this.group, consumer: this.consumer });
    this.busLog = log;
    this.reads = new PartitionReads(this, keys);
    this.leases = new PartitionLeases(this, keys, (part) => this.run(part));
    this.worker = new PartitionWorker(this, this.reads, this.leases, handler);
    this.readLoop = new ReadLoop(this, this.reads, keys, (part, records) => this.run(part, records));
  }

  async start(): Promise<void> {
    await this.reads.ensureGroups();
    await this.leases.round();
    this.scheduleTick();
    this.readDone = this.readLoop.run();
  }

  close(): Promise<void> {
    this.closed ??= this.shutDown();
    return this.closed;
  }

  expired(part: Part): boolean {
    if (!part.lost && Date.now() >= part.validUntil) {
      part.lost = true;
      if (!part.abandoned) this.noteExpired(part.partition);
    }
    return part.lost;
  }

  /** Partitions whose leases ran out in this turn of the event loop: a Redis stall ends them all at once, said in one line. */
  private expiring: number[] = [];
  private noteExpired(partition: number): void {
    if (this.expiring.length === 0) {
      setImmediate(() => {
        const partitions = this.expiring.sort((a, b) => a - b);
        this.expiring = [];
        this.log.warn('partition leases not renewed in time; stopping them', { partitions });
      });
    }
    this.expiring.push(partition);
  }

  drop(part: Part): void {
    if (this.parts.get(part.partition) === part) this.parts.delete(part.partition);
  }

  wakeReader(): void {
    this.readLoop.wakeReader();
  }

  backoff(failures: number): number {
    return Math.min(this.settings.maxRetryDelayMs, this.settings.retryDelayMs * 2 ** failures);
  }

  pause(ms: number): Promise<void> {
    if (this.closing) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const sleeper = {
        timer: setTimeout(() => {
          this.sleepers.delete(sleeper);
          resolve();
        }, ms),
        resolve,
      };
      this.sleepers.add(sleeper);
    });
  }

  private scheduleTick(): void {
    if (this.closing) return;
    this.tickTimer = setTimeout(() => {
      this.tickTimer = undefined;
      this.ticking = this.leases
        .round()
        .catch((err) => this.log.warn('partition lease round failed', { err }))
        .finally(() => {
          this.ticking = undefined;
          this.scheduleTick();
        });
    }, this.settings.renewEveryMs);
  }

  /** Runs a partition's worker, keeping track of it so close can wait for it. */
  private run(part: Part, records?: DeliveredRecord[]): void {
    const tracked = this.worker.work(part, records).catch((err) => this.log.error('partition worker failed', { err }));
    this.workers.add(tracked);
    void tracked.finally(() => this.workers.delete(tracked));
  }

  private async shutDown(): Promise<void> {
    this.closing = true;
    if (this.tickTimer) clearTimeout(this.tickTimer);
    this.tickTimer = undefined;
    for (const sleeper of this.sleepers) {
      clearTimeout(sleeper.timer);
      sleeper.resolve();
    }
    this.sleepers.clear();
    this.wakeReader();
    await this.readDone;
    await this.ticking;

    // Let the handlers finish (and acknowledge) the batches they hold, up to closeTimeoutMs.
    if (this.workers.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all([...this.workers]), new Promise<void>((resolve) => (timer = setTimeout(resolve, this.settings.closeTimeoutMs)))]);
      clearTimeout(timer);
    }
    this.dead = true;
    this.readLoop.cancelUnblock();

    // Hand back every partition (what was not acknowledged moves at once), and leave the group.
    await this.leases.releaseAll();
    this.parts.clear();
    await this.readLoop.close();
    this.onClosed?.();
  }
}
