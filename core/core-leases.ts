import { ConfigError } from '../lib/config';
import type { Logger } from '../lib/log';
import type { HotState } from './ports/state';

/** A lease one core of a deployment holds, and what a second core that finds it held is told. */
export interface CoreLease {
  name: string;
  refusal(holder: string): string;
}

export interface CoreLeaseOptions {
  state: Pick<HotState, 'holdLease'>;
  leases: readonly CoreLease[];
  /** Who this core is: the same after a restart of it (its host and data directory), so it takes its own lease back at once. */
  holder: string;
  log: Logger;
  /** How long a lease outlives a core that stopped renewing it (killed). */
  ttlMs?: number;
}

const TTL_MS = 15_000;

/**
 * The leases that keep a second core of a deployment from doing what only
 * one may: its `HERMOD_CORE_INSTANCE` (the number in every integer message
 * id: two cores with one number hand out the same ids), or a history of its
 * own beside a shared bus (each core records statuses of the other's
 * messages, and recovery sends them again). A lease held by another holder
 * is waited for while it may be a killed core's running out (its time to
 * live); one still renewed after that is a live core, and this one refuses
 * to start with a configuration error. Renewed every third of its time,
 * and given up at the end of a stop, so a core started on another host after
 * a planned stop need not wait it out.
 */
export async function holdCoreLeases(o: CoreLeaseOptions): Promise<{ stop(): void; release(): Promise<void> }> {
  const ttlMs = o.ttlMs ?? TTL_MS;
  for (const lease of o.leases) {
    const waitUntil = performance.now() + ttlMs + Math.min(2_000, ttlMs / 5);
    for (let told = false; ; told = true) {
      const other = await o.state.holdLease(lease.name, o.holder, ttlMs);
      if (other === undefined) break;
      if (performance.now() > waitUntil) throw new ConfigError(lease.refusal(other));
      if (!told)
        o.log.warn('another core holds a lease this core needs; waiting for it to run out, as a stopped core’s does', {
          lease: lease.name,
          holder: other,
          waitMs: ttlMs,
        });
      await new Promise((r) => setTimeout(r, Math.max(10, ttlMs / 15)));
    }
  }
  let lost = new Set<string>();
  const renew = setInterval(() => {
    void Promise.all(
      o.leases.map(async (lease) => {
        const other = await o.state.holdLease(lease.name, o.holder, ttlMs);
        return other === undefined ? undefined : { lease: lease.name, holder: other };
      }),
    )
      .then((taken) => {
        const now = new Set(taken.flatMap((t) => (t ? [t.lease] : [])));
        for (const t of taken) if (t && !lost.has(t.lease)) o.log.error('another core took a lease this core holds: two cores now do what only one may', t);
        lost = now;
      })
      // Hot state out of reach: the lease may run out meanwhile; the next renewal says whether another core took it.
      .catch(() => {});
  }, ttlMs / 3);
  renew.unref();
  return {
    stop: () => clearInterval(renew),
    // Held for a moment more, then lapsing: only while still this holder's (a lease another core took is left alone).
    async release() {
      clearInterval(renew);
      await Promise.all(o.leases.map((lease) => o.state.holdLease(lease.name, o.holder, 1).catch(() => undefined)));
    },
  };
}

/** The leases a core on `adapters` needs: none on state of its own (it runs alone). */
export function coreLeasesOf(adapters: { state: string; history: string }, instance: number): CoreLease[] {
  if (adapters.state !== 'redis') return [];
  const leases: CoreLease[] = [
    {
      name: `core-instance-${instance}`,
      refusal: (holder) =>
        `HERMOD_CORE_INSTANCE: another core runs as ${instance} on this deployment (${holder}); give each core its own number (0-15), or message ids repeat`,
    },
  ];
  if (adapters.history === 'chdb')
    leases.push({
      name: 'core-embedded-history',
      refusal: (holder) =>
        `HERMOD_HISTORY: another core runs on this deployment with its own embedded history (${holder}); cores that share hot state and a bus must share their history: HERMOD_HISTORY=clickhouse`,
    });
  return leases;
}
