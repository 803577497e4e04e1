import type { Member, Part } from './redis-bus-member';
import { leaseKey, membersKey } from './redis-bus-keys';
import { planRebalance } from './redis-bus-rebalance';
import { busScripts } from './redis-bus-scripts';
import { pipelineResults } from './redis-connection';
import { othersHoldPending } from './redis-bus-replies';

/** Idle time given to the pending entries of a partition that is handed back, so its next owner claims them at once. */
const HANDED_BACK_IDLE_MS = 24 * 60 * 60 * 1000;

/**
 * The partition leases of one subscription and its membership of the group:
 * each round renews what it holds, takes free partitions up to a fair share
 * (see planRebalance), marks surplus ones to be handed back, and trims the
 * streams it holds now and then.
 */
export class PartitionLeases {
  private readonly leases: string[];
  private readonly membersKey: string;
  /** When each partition was first seen without an owner, in the current run of sightings. */
  private readonly freeSince = new Map<number, number>();
  private lastTrim = 0;
  private lastStrayCheck = 0;

  constructor(
    private readonly member: Member,
    private readonly keys: readonly string[],
    /** Starts consuming a partition just taken, beginning with the takeover steps. */
    private readonly run: (part: Part) => void,
  ) {
    this.leases = keys.map((key) => leaseKey(key, member.group));
    this.membersKey = membersKey(member.settings.prefix, member.topic, member.group);
  }

  /** Renews leases, refreshes membership, takes free partitions and hands back surplus ones. */
  async round(): Promise<void> {
    const m = this.member;
    if (m.closing) return;
    const { partitions, leaseMs, claimIdleMs } = m.settings;
    const now = Date.now();
    for (const part of m.parts.values()) {
      if (!part.abandoned && part.handlingSince !== undefined && now - part.handlingSince > claimIdleMs) {
        part.abandoned = true;
        m.log.warn('handler holds a batch too long; leaving the partition to another member', { partition: part.partition });
      }
    }
    const renewing = [...m.parts.values()].filter((p) => !p.abandoned && !p.lost && p.state !== 'releasing');

    const pipeline = m.cmd.pipeline();
    const scripted = busScripts(pipeline);
    const sentAt = Date.now();
    void scripted.hermodMembers(this.membersKey, m.token, leaseMs, '0');
    for (const lease of this.leases) pipeline.get(lease);
    for (const part of renewing) void scripted.hermodLeaseRenew(part.lease, m.token, leaseMs);
    const results = pipelineResults('renewing partition leases', await pipeline.exec());
    const members = (results[0] as unknown[]).map(String);
    const owners = results.slice(1, 1 + partitions).map((o) => (o === null || o === undefined ? undefined : String(o)));
    const lost: number[] = [];
    renewing.forEach((part, i) => {
      if (Number(results[1 + partitions + i]) === 1) {
        part.validUntil = sentAt + leaseMs;
        return;
      }
      if (part.state === 'releasing' || m.parts.get(part.partition) !== part) return; // handed back meanwhile
      part.lost = true;
      lost.push(part.partition);
      if (part.state === 'idle') m.wakeReader();
    });
    // One line for a round's losses: a Redis restart loses every lease at once (128 lines from one process in a trial).
    if (lost.length > 0)
      m.log.warn(
        lost.length === 1 ? 'lost a partition lease' : 'lost partition leases',
        lost.length === 1 ? { partition: lost[0] } : { partitions: lost.sort((a, b) => a - b) },
      );
    if (m.closing) return;
    if (now - this.lastStrayCheck >= m.settings.claimIdleMs) {
      this.lastStrayCheck = now;
      await this.claimStrays();
    }
    if (now - this.lastTrim >= m.settings.trimEveryMs) {
      this.lastTrim = now;
      await this.trimHeld();
    }

    // What is free.
    const free: number[] = [];
    for (let p = 0; p < partitions; p++) {
      if (owners[p] === undefined && !m.parts.has(p)) {
        free.push(p);
        if (!this.freeSince.has(p)) this.freeSince.set(p, now);
      } else {
        // (A lease of ours unknown here — a hand-back that failed — simply expires.)
        this.freeSince.delete(p);
      }
    }

    const holding = [...m.parts.values()].filter((p) => !p.abandoned && !p.lost && !p.wantRelease && p.state !== 'releasing');
    const plan = planRebalance({ partitions, token: m.token, members, owners, held: holding.length, free, freeSince: this.freeSince, now, leaseMs });
    if (plan.take.length > 0) await this.acquire(plan.take);
    if (plan.handBack <= 0) return;
    const order = [...holding].sort((a, b) => Number(b.state === 'idle') - Number(a.state === 'idle'));
    for (const part of order.slice(0, plan.handBack)) {
      part.wantRelease = true;
      if (part.state === 'idle') m.wakeReader();
    }
  }

  /** Hands a partition back: our pending entries become claimable at once, then the lease goes. */
  async release(part: Part): Promise<void> {
    const m = this.member;
    part.state = 'releasing';
    try {
      await busScripts(m.cmd).hermodLeaseRelease(part.key, part.lease, m.group, m.consumer, m.token, m.settings.claimIdleMs + HANDED_BACK_IDLE_MS);
    } catch (err) {
      m.log.warn('handing a partition back failed; its lease will expire', { partition: part.partition, err });
    }
    m.drop(part);
  }

  /** On close: hands back every partition held (what was not acknowledged moves at once), and leaves the group. */
  async releaseAll(): Promise<void> {
    const m = this.member;
    try {
      const pipeline = m.cmd.pipeline();
      const scripted = busScripts(pipeline);
      const idle = m.settings.claimIdleMs + HANDED_BACK_IDLE_MS;
      for (const part of m.parts.values()) void scripted.hermodLeaseRelease(part.key, part.lease, m.group, m.consumer, m.token, idle);
      void scripted.hermodMembers(this.membersKey, m.token, m.settings.leaseMs, '1');
      await pipeline.exec();
    } catch (err) {
      m.log.warn('handing partitions back on close failed; their leases will expire', { err });
    }
  }

  /**
   * Entries of a partition we own that another consumer holds pending: a
   * member that lost the partition (a Redis restart cut every lease) whose
   * blocking read Redis ran once more after our takeover had claimed what
   * there was. Nobody else will claim them: the partition goes through its
   * takeover again (claim once idle, re-read our own), or they would stay
   * pending for good, unsent, holding the stream's trim.
   */
  private async claimStrays(): Promise<void> {
    const m = this.member;
    const live = [...m.parts.values()].filter((p) => p.mode === 'live' && !p.lost && !p.abandoned && !p.wantRelease && p.state !== 'releasing');
    if (live.length === 0) return;
    const pipeline = m.cmd.pipeline();
    for (const part of live) pipeline.call('XPENDING', part.key, m.group);
    let summaries: unknown[];
    try {
      summaries = pipelineResults('looking for entries other consumers hold', await pipeline.exec());
    } catch (err) {
      m.log.warn('looking for entries other consumers hold failed', { err });
      return;
    }
    live.forEach((part, i) => {
      if (!othersHoldPending(summaries[i], m.consumer) || part.mode !== 'live' || m.parts.get(part.partition) !== part) return;
      m.log.warn('another consumer holds entries of a partition of ours; taking them over once idle', { partition: part.partition });
      part.mode = 'claim';
      if (part.state === 'idle') {
        this.run(part);
        m.wakeReader();
      }
    });
  }

  /** Trims the streams of the partitions we hold of what every group has acknowledged. */
  private async trimHeld(): Promise<void> {
    const m = this.member;
    const held = [...m.parts.values()].filter((p) => !p.lost && !p.abandoned && p.state !== 'releasing');
    if (held.length === 0) return;
    const pipeline = m.cmd.pipeline();
    for (const part of held) void busScripts(pipeline).hermodTrimAcknowledged(part.key, m.settings.keepAcknowledgedMs);
    try {
      pipelineResults('trimming acknowledged entries', await pipeline.exec());
    } catch (err) {
      // Nothing is lost by a missed trim; the next round tries again.
      m.log.warn('trimming acknowledged entries failed', { err });
    }
  }

  private async acquire(partitions: number[]): Promise<void> {
    const m = this.member;
    const pipeline = m.cmd.pipeline();
    const sentAt = Date.now();
    for (const p of partitions) pipeline.set(this.leases[p]!, m.token, 'PX', m.settings.leaseMs, 'NX');
    const results = pipelineResults('taking partition leases', await pipeline.exec());
    partitions.forEach((p, i) => {
      if (results[i] !== 'OK') return;
      this.freeSince.delete(p);
      const part: Part = {
        partition: p,
        key: this.keys[p]!,
        lease: this.leases[p]!,
        state: 'busy',
        mode: 'claim',
        wantRelease: false,
        lost: false,
        abandoned: false,
        handlingSince: undefined,
        validUntil: sentAt + m.settings.leaseMs,
      };
      m.parts.set(p, part);
      this.run(part);
    });
  }
}
