import type { CarrierSnapshot, CarrierSnapshotState, ReportedCarrierSnapshot } from '../ports/carrier-snapshot';

/** Carrier snapshots of the in-process hot state: reporter → its latest snapshots and when they expire. */
export function createMemoryCarrierSnapshots(now: () => number, open: () => void): CarrierSnapshotState {
  const reports = new Map<string, { at: number; expires: number; snapshots: readonly CarrierSnapshot[] }>();
  return {
    async putCarrierSnapshots(reporter, snapshots, ttlMs) {
      open();
      const at = now();
      reports.set(reporter, { at, expires: at + ttlMs, snapshots: snapshots.map((s) => ({ ...s })) });
    },
    async listCarrierSnapshots() {
      open();
      const t = now();
      const out: ReportedCarrierSnapshot[] = [];
      for (const [reporter, report] of reports) {
        if (report.expires <= t) {
          reports.delete(reporter);
          continue;
        }
        for (const s of report.snapshots) out.push({ ...s, reporter, reportedAt: report.at });
      }
      return out;
    },
  };
}
