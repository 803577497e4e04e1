import { rateLimitedWarning } from '../../lib/rate-limited-warning';
import type { BatchHandler, DeliveredRecord } from '../ports/bus';
import type { PartitionLeases } from './redis-bus-leases';
import type { Member, Part } from './redis-bus-member';
import type { PartitionReads } from './redis-bus-reads';

/** How often a partition with batches in hand and nothing more read is looked at for new entries. */
const DRY_LOOK_MS = 50;

/**
 * Consumes the partitions of one subscription, each on its own: takeover
 * (claim others' pending entries, then re-read our own), then new entries,
 * handler, XACK (pipelined with a non-blocking read of the next batch), until
 * the partition runs dry and goes back to the blocking read. A rejected batch
 * is handed out again after a backoff.
 */
export class PartitionWorker {
  /**
   * Once a minute for the subscription, with how many: a Redis away a second, or back empty (NOGROUP until the
   * groups are made again), fails every partition's reads at each retry (~145 lines from one core in a trial).
   */
  private readonly failed: (fields: Record<string, unknown>) => void;

  constructor(
    private readonly member: Member,
    private readonly reads: PartitionReads,
    private readonly leases: PartitionLeases,
    private readonly handler: BatchHandler,
  ) {
    this.failed = rateLimitedWarning(member.log, 'consuming a partition failed; retrying', { count: 'failures' });
  }

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
        if (part.mode === 'live' && m.inFlight > 1) {
          const outcome = await this.sideBySide(part, batch);
          batch = undefined;
          if (outcome === 'idle') {
            // Another consumer's entries were found meanwhile (redis-bus-leases.ts, while the batches were in hand: the
            // mode changes under this loop): taken over before the partition waits idle.
            if ((part.mode as Part['mode']) === 'claim') continue;
            part.state = 'idle';
            m.wakeReader();
            return;
          }
          if (outcome !== 'stop') throw outcome.error;
          continue;
        }
        batch ??= part.mode === 'pending' ? await this.reads.readOwnPending(part) : await this.reads.readNew(part);
        if (batch.length === 0) {
          batch = undefined;
          if (part.mode === 'pending') {
            part.mode = 'live';
            continue;
          }
          if ((part.mode as Part['mode']) === 'claim') continue;
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
        this.failed({ partition: part.partition, err });
        await m.pause(m.backoff(errors++));
      }
    }
  }

  /**
   * New entries of a live partition, up to the member's inFlight batches in
   * the handler's hands at once, each acknowledged (XACK) when its handler
   * resolves, whatever the order: a batch whose handler is slow holds up only
   * itself. Returns once the partition runs dry with nothing in hand ('idle'),
   * once it must stop (a hand-back, a lost lease, a close) and what was in hand
   * settled ('stop'), or with the first read or acknowledgement that failed,
   * once what was in hand settled (the partition then re-reads its pending
   * entries, none of them in a handler's hands any more).
   */
  private async sideBySide(part: Part, first: DeliveredRecord[] | undefined): Promise<'idle' | 'stop' | { error: unknown }> {
    const m = this.member;
    const inHand = new Set<Promise<void>>();
    let failure: { error: unknown } | undefined;
    let dry = false;
    let batch = first;
    const stopping = (): boolean => m.closing || m.dead || part.wantRelease || part.lost || part.abandoned || Date.now() >= part.validUntil;
    const start = (records: DeliveredRecord[]): void => {
      const done: Promise<void> = (async () => {
        if (!(await this.handle(part, records)) || m.dead) return;
        await m.cmd.xack(part.key, m.group, ...records.map((r) => r.offset));
      })()
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .finally(() => inHand.delete(done));
      inHand.add(done);
    };
    for (;;) {
      while (!failure && !dry && inHand.size < m.inFlight && !stopping()) {
        try {
          batch ??= await this.reads.readNew(part);
        } catch (error) {
          failure = { error };
          break;
        }
        if (batch.length === 0) dry = true;
        else start(batch);
        batch = undefined;
      }
      if (inHand.size === 0) return failure ?? (stopping() ? 'stop' : 'idle');
      // The blocking read leaves a busy partition alone: while its batches are in hand, it is looked at again
      // every DRY_LOOK_MS for what came since, and whenever a batch ends.
      await Promise.race([...inHand, ...(dry && !failure ? [m.pause(DRY_LOOK_MS)] : [])]);
      dry = false;
    }
  }

  /** When each batch in a handler's hands was handed, per partition: the partition is held as long as its oldest. */
  private readonly handing = new Map<Part, Set<{ since: number }>>();

  private handingStarted(part: Part): { since: number } {
    const entry = { since: Date.now() };
    let set = this.handing.get(part);
    if (!set) this.handing.set(part, (set = new Set()));
    set.add(entry);
    part.handlingSince = Math.min(...[...set].map((e) => e.since));
    return entry;
  }

  private handingEnded(part: Part, entry: { since: number }): void {
    const set = this.handing.get(part);
    set?.delete(entry);
    if (!set || set.size === 0) {
      this.handing.delete(part);
      part.handlingSince = undefined;
    } else part.handlingSince = Math.min(...[...set].map((e) => e.since));
  }

  /** Hands a batch to the handler until it resolves (true) or the partition must stop (false). */
  private async handle(part: Part, records: DeliveredRecord[]): Promise<boolean> {
    const m = this.member;
    for (let attempt = 0; ; attempt++) {
      const batch = attempt === 0 ? records : records.map((r) => ({ ...r, redeliveries: r.redeliveries + attempt }));
      const handing = this.handingStarted(part);
      let ok = true;
      try {
        await Promise.resolve().then(() => this.handler(batch));
      } catch (err) {
        ok = false;
        m.log.debug('handler rejected a batch', { partition: part.partition, err });
      }
      this.handingEnded(part, handing);
      if (ok) return true;
      const stop = (): boolean => m.closing || m.dead || part.wantRelease || part.lost || part.abandoned;
      if (stop()) return false;
      await m.pause(m.backoff(attempt));
      if (stop()) return false;
    }
  }
}
