import { describe, expect, it } from 'vitest';
import { ConfigError } from '../lib/config';
import { createLogger } from '../lib/log';
import { coreLeasesOf, holdCoreLeases } from './core-leases';
import type { HotState } from './ports/state';

/** Leases as a shared hot state keeps them: one holder each, until its time runs out. */
function sharedLeases(): Pick<HotState, 'holdLease'> {
  const held = new Map<string, { holder: string; until: number }>();
  return {
    async holdLease(name, holder, ttlMs) {
      const now = performance.now();
      const lease = held.get(name);
      if (lease && lease.until > now && lease.holder !== holder) return lease.holder;
      held.set(name, { holder, until: now + ttlMs });
      return undefined;
    },
  };
}

const log = createLogger({ test: 'core-leases' });
const INSTANCE_0 = coreLeasesOf({ state: 'redis', history: 'clickhouse' }, 0);

describe('holdCoreLeases', () => {
  it('refuses to start a second live core with the same HERMOD_CORE_INSTANCE, naming the first and what to change', async () => {
    const state = sharedLeases();
    const first = await holdCoreLeases({ state, leases: INSTANCE_0, holder: 'host-a /srv/hermod-ā', log, ttlMs: 300 });
    const started = performance.now();
    const second = holdCoreLeases({ state, leases: INSTANCE_0, holder: 'host-b /srv/hermod', log, ttlMs: 300 });
    await expect(second).rejects.toThrow(ConfigError);
    await expect(second).rejects.toThrow(
      /HERMOD_CORE_INSTANCE: another core runs as 0 on this deployment \(host-a \/srv\/hermod-ā\); give each core its own number/,
    );
    // It waited out the lease's time first, in case the holder had been killed.
    expect(performance.now() - started).toBeGreaterThan(300);
    first.stop();
  });

  it('takes the lease of a core that was killed once its time has run out', async () => {
    const state = sharedLeases();
    const killed = await holdCoreLeases({ state, leases: INSTANCE_0, holder: 'host-a /data', log, ttlMs: 300 });
    killed.stop(); // no more renewals, as after kill -9
    await expect(holdCoreLeases({ state, leases: INSTANCE_0, holder: 'host-b /data', log, ttlMs: 300 })).resolves.toBeDefined();
  });

  it('takes its own lease back at once when the same core restarts on its host and data directory', async () => {
    const state = sharedLeases();
    (await holdCoreLeases({ state, leases: INSTANCE_0, holder: 'host-a /data', log, ttlMs: 60_000 })).stop();
    const started = performance.now();
    (await holdCoreLeases({ state, leases: INSTANCE_0, holder: 'host-a /data', log, ttlMs: 60_000 })).stop();
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('gives its lease up when it stops, so a core started on another host right after need not wait it out', async () => {
    const state = sharedLeases();
    const stopping = await holdCoreLeases({ state, leases: INSTANCE_0, holder: 'host-a /data', log, ttlMs: 60_000 });
    await stopping.release();
    await new Promise((r) => setTimeout(r, 5));
    const started = performance.now();
    (await holdCoreLeases({ state, leases: INSTANCE_0, holder: 'host-b /data', log, ttlMs: 60_000 })).stop();
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('keeps a live core’s lease from running out by renewing it', async () => {
    const state = sharedLeases();
    const first = await holdCoreLeases({ state, leases: INSTANCE_0, holder: 'host-a /data', log, ttlMs: 150 });
    await new Promise((r) => setTimeout(r, 600));
    await expect(holdCoreLeases({ state, leases: INSTANCE_0, holder: 'host-b /data', log, ttlMs: 150 })).rejects.toThrow(ConfigError);
    first.stop();
  });
});

describe('coreLeasesOf', () => {
  it('needs no lease for a core with hot state of its own, one per instance on Redis, and one more beside an embedded history', () => {
    expect(coreLeasesOf({ state: 'memory', history: 'chdb' }, 0)).toEqual([]);
    expect(coreLeasesOf({ state: 'redis', history: 'clickhouse' }, 3).map((l) => l.name)).toEqual(['core-instance-3']);
    const embedded = coreLeasesOf({ state: 'redis', history: 'chdb' }, 0);
    expect(embedded.map((l) => l.name)).toEqual(['core-instance-0', 'core-embedded-history']);
    expect(embedded[1]!.refusal('host-a /data')).toMatch(/must share their history: HERMOD_HISTORY=clickhouse/);
  });
});
