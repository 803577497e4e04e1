import type { CarrierSnapshot, CarrierSnapshotState, ReportedCarrierSnapshot } from '../ports/carrier-snapshot';
import type { RedisClient } from './redis-connection';

type Each = <T>(what: string, commands: (() => Promise<T>)[]) => Promise<T[]>;

/**
 * Carrier snapshots of the Redis hot state: one hash, `<prefix>:carriers`,
 * reporter → `{"at","expires","snapshots"}`. A reporter that stops writing
 * (a worker that died) is dropped by the first read after its entry expired.
 */
export function createRedisCarrierSnapshots(client: RedisClient, prefix: string, each: Each, open: () => void): CarrierSnapshotState {
  const key = `${prefix}:carriers`;
  return {
    async putCarrierSnapshots(reporter, snapshots, ttlMs) {
      open();
      const at = Date.now();
      await each('storing carrier snapshots', [() => client.hset(key, reporter, JSON.stringify({ at, expires: at + ttlMs, snapshots }))]);
    },
    async listCarrierSnapshots() {
      open();
      const [all] = await each('reading carrier snapshots', [() => client.hgetall(key)]);
      const t = Date.now();
      const out: ReportedCarrierSnapshot[] = [];
      const expired: string[] = [];
      for (const [reporter, text] of Object.entries(all ?? {})) {
        let report: { at: number; expires: number; snapshots: CarrierSnapshot[] };
        try {
          report = JSON.parse(text) as typeof report;
        } catch {
          expired.push(reporter);
          continue;
        }
        if (!(report.expires > t)) {
          expired.push(reporter);
          continue;
        }
        for (const s of report.snapshots ?? []) out.push({ ...s, reporter, reportedAt: report.at });
      }
      if (expired.length > 0) await each('forgetting expired carrier snapshots', [() => client.hdel(key, ...expired)]);
      return out;
    },
  };
}
