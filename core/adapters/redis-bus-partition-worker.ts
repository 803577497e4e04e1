import type { BatchHandler, DeliveredRecord } from '../ports/bus';
import type { PartitionLeases } from './redis-bus-leases';
import type { Member, Part } from './redis-bus-member';
import type { PartitionReads } from './redis-bus-reads';

/**
 * Consumes the partitions of one subscription, each on its own: takeover
 * (claim others' pending entries, then re-read our own), then new entries,
 * handler, XACK (pipelined with a non-blocking read of the next batch), until
 * the partition runs dry and goes back to the blocking read. A rejected batch
 * is handed out again after a backoff.
 */
export class PartitionWorker {
  constructor(
    private readonly member: Member,
    private readonly reads: PartitionReads,
    private readonly leases: PartitionLeases,
    private readonly handler: BatchHandler,
  ) {}

  /** Runs one partition until it runs dry (then it waits in the blocking read), is handed back, lost, or the subscription closes. */
  async work(part: Part, initial?: DeliveredRecord[]): Promise<void> {
    const m = this.member;
    part.state = 'busy';
    let batch = initial;
    let errors = 0;
    for (;;) {
      if (m.dead) return;
      if (m.expired(part)) return m.drop(part);
      if (m.closing) return; // close hands back whatever is left
      // A batch already read while the lease was ours is handled before a hand-back.
      if (part.abandoned || (part.wantRelease && !batch)) return this.leases.release(part);
      try {
        if (part.mode === 'claim') {
          if (await this.reads.claimOthers(part)) part.mode = 'pending';
          else await m.pause(Math.max(10, Math.min(500, m.settings.claimIdleMs / 4)));
          continue;
        }
        batch ??= part.mode === 'pending' ? await this.reads.readOwnPending(part) : await this.reads.readNew(part);
        if (batch.length === 0) {
          batch = undefined;
          if (part.mode === 'pending') {
            part.mode = 'live';
            continue;
          }
          part.state = 'idle';
          m.wakeReader();
          return;
        }
        const handed = batch;
        batch = undefined;
        if (!(await this.handle(part, handed)) || m.dead) continue;
        // Acknowledge and fetch the next batch in one round trip; if the ack fails, the
        // partition re-reads its pending entries first, so order is kept.
        const prefetch = part.mode === 'live' && !m.closing && !part.wantRelease && !part.lost && !part.abandoned;
        const [, next] = await Promise.all([m.cmd.xack(part.key, m.group, ...handed.map((r) => r.offset)), prefetch ? this.reads.readNew(part) : undefined]);
        batch = next;
        errors = 0;
      } catch (err) {
        batch = undefined;
        if (m.closing || m.dead) return;
        if (part.mode === 'live') part.mode = 'pending';
        if (err instanceof Error && err.message.startsWith('NOGROUP')) await this.reads.ensureGroups().catch(() => undefined);
        m.log.warn('consuming a partition failed; retrying', { partition: part.partition, err });
        await m.pause(m.backoff(errors++));
      }
    }
  }

  /** Hands a batch to the handler until it resolves (true) or the partition must stop (false). */
  private async handle(part: Part, records: DeliveredRecord[]): Promise<boolean> {
    const m = this.member;
    for (let attempt = 0; ; attempt++) {
      const batch = attempt === 0 ? records : records.map((r) => ({ ...r, redeliveries: r.redeliveries + attempt }));
      part.handlingSince = Date.now();
      let ok = true;
      try {
        await Promise.resolve().then(() => this.handler(batch));
      } catch (err) {
        ok = false;
        m.log.debug('handler rejected a batch', { partition: part.partition, err });
      }
      part.handlingSince = undefined;
      if (ok) return true;
      const stop = (): boolean => m.closing || m.dead || part.wantRelease || part.lost || part.abandoned;
      if (stop()) return false;
      await m.pause(m.backoff(attempt));
      if (stop()) return false;
    }
  }
}
