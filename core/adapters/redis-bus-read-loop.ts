import type { Redis } from 'ioredis';
import { rateLimitedWarning } from '../../lib/rate-limited-warning';
import type { DeliveredRecord } from '../ports/bus';
import type { Member, Part } from './redis-bus-member';
import type { PartitionReads } from './redis-bus-reads';
import { deliveredRecord, parseStreams } from './redis-bus-replies';
import { closeRedis, watchErrors } from './redis-connection';

/**
 * The blocking read of one subscription: on a connection of its own, one
 * XREADGROUP (COUNT maxBatch, BLOCK blockMs) over the partitions that are
 * idle; a partition with records then runs on its own until it runs dry and
 * joins the read again. A read in progress is cut short with CLIENT UNBLOCK
 * when it must include a partition.
 */
export class ReadLoop {
  private readonly reader: Redis;
  private readonly partitionOf = new Map<string, number>();
  private wake: (() => void) | undefined;
  /** Partitions named by the blocking read in progress. */
  private reading: Set<number> | undefined;
  private readCycle = 0;
  private readerId: number | undefined;
  private unblockCycle = -1;
  private unblockTimer: NodeJS.Timeout | undefined;
  /** Once a minute for the subscription, with how many: a Redis away, or back empty (NOGROUP), fails each retry. */
  private readonly failed: (fields: Record<string, unknown>) => void;

  constructor(
    private readonly member: Member,
    private readonly reads: PartitionReads,
    keys: readonly string[],
    /** Runs a partition (with the records read for it, if any) until it runs dry again. */
    private readonly startWork: (part: Part, records?: DeliveredRecord[]) => void,
  ) {
    keys.forEach((key, p) => {
      this.partitionOf.set(key, p);
    });
    this.failed = rateLimitedWarning(member.log, 'blocking read failed; retrying', { count: 'failures' });
    this.reader = member.cmd.duplicate({ enableAutoPipelining: false });
    watchErrors(this.reader, member.busLog);
    this.reader.on('close', () => {
      this.readerId = undefined;
    });
  }

  /** Reads until the subscription closes. */
  async run(): Promise<void> {
    const m = this.member;
    let errors = 0;
    while (!m.closing) {
      for (const part of [...m.parts.values()]) {
        if (part.state !== 'idle') continue;
        if (m.expired(part)) m.drop(part);
        else if (part.wantRelease) this.startWork(part); // it hands itself back
      }
      const idle = [...m.parts.values()].filter((p) => p.state === 'idle');
      if (idle.length === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }

      const keys = idle.map((p) => p.key);
      this.reading = new Set(idle.map((p) => p.partition));
      let reply: unknown;
      try {
        if (this.readerId === undefined) {
          // Sent ahead of the read on the same connection, so it is known while the read blocks.
          this.reader.call('CLIENT', 'ID').then(
            (id) => void (this.readerId = Number(id)),
            () => undefined,
          );
        }
        reply = await this.reads.readBlocking(this.reader, keys);
        errors = 0;
      } catch (err) {
        if (m.closing) break;
        if (err instanceof Error && err.message.startsWith('NOGROUP')) await this.reads.ensureGroups().catch(() => undefined);
        this.failed({ err });
        await m.pause(m.backoff(errors++));
        continue;
      } finally {
        this.reading = undefined;
        this.readCycle += 1;
        this.cancelUnblock();
      }

      for (const stream of parseStreams(reply)) {
        const partition = this.partitionOf.get(stream.key);
        const part = partition === undefined ? undefined : m.parts.get(partition);
        // Records for a partition that is no longer surely ours, or read while closing, stay
        // pending here: a hand-back marks them claimable, a lost lease's next owner claims them once idle.
        if (part?.state !== 'idle' || m.expired(part) || m.closing) continue;
        const records = stream.entries.flatMap((e) => (e.fields ? [deliveredRecord(m.topic, part.partition, e.id, e.fields, 0)] : []));
        if (records.length > 0) this.startWork(part, records);
      }
    }
  }

  /** Makes the loop look at the partitions again: wakes it if waiting, cuts its blocking read short if reading. */
  wakeReader(): void {
    if (this.wake) {
      const wake = this.wake;
      this.wake = undefined;
      wake();
    } else if (this.reading) {
      this.unblock();
    }
  }

  /** Stops retrying a CLIENT UNBLOCK. */
  cancelUnblock(): void {
    if (this.unblockTimer) clearTimeout(this.unblockTimer);
    this.unblockTimer = undefined;
  }

  /** Closes the read's connection (once the loop has ended). */
  close(): Promise<void> {
    return closeRedis(this.reader);
  }

  /** CLIENT UNBLOCK for the read in progress, retried briefly if the read has not reached Redis yet. */
  private unblock(): void {
    const cycle = this.readCycle;
    if (this.unblockCycle === cycle) return;
    this.unblockCycle = cycle;
    const attempt = (): void => {
      this.unblockTimer = undefined;
      if (this.readCycle !== cycle || this.member.dead) return;
      const id = this.readerId;
      const sent = id === undefined ? Promise.resolve(0) : this.member.cmd.call('CLIENT', 'UNBLOCK', String(id)).then(Number, () => 0);
      void sent.then((unblocked) => {
        if (unblocked === 1 || this.readCycle !== cycle || this.member.dead) return;
        this.unblockTimer = setTimeout(attempt, 5);
      });
    };
    attempt();
  }
}
