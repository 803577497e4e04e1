import { describe, expect, it } from 'vitest';
import { createMemoryState } from '../core/adapters/memory-state';
import type { CarrierSnapshot } from '../core/ports/carrier-snapshot';
import { createLogger } from '../lib/log';
import { eventually } from '../test/support/eventually';
import { startCarrierSnapshotReporter } from './carrier-snapshot-reporter';

const bind = (windowInUse: number): CarrierSnapshot => ({
  channel: 'sms',
  bind: 'hermod@smsc.localhost:2775',
  up: true,
  windowInUse,
  windowSize: 256,
  submitsPerSecond: 0,
  lastError: '',
  lastErrorAt: 0,
});

describe('carrier snapshot reporter', () => {
  it("writes the pool's binds into hot state each interval, and takes them away when the pool stops", async () => {
    const state = createMemoryState();
    let inUse = 0;
    const reporter = startCarrierSnapshotReporter({
      state,
      channel: 'sms',
      reporter: 'kōwhai:1:sms',
      snapshot: () => [bind(inUse++)],
      log: createLogger(),
      everyMs: 20,
    });
    await eventually(async () => ((await state.listCarrierSnapshots())[0]?.windowInUse ?? 0) >= 3, 5_000, 10);
    expect((await state.listCarrierSnapshots())[0]).toMatchObject({ reporter: 'kōwhai:1:sms', bind: 'hermod@smsc.localhost:2775', up: true });
    await reporter.stop();
    await new Promise((r) => setTimeout(r, 5));
    expect(await state.listCarrierSnapshots()).toEqual([]);
    await state.close();
  });

  it("keeps a crashed worker's binds in hot state for two minutes, so the console shows them down instead of losing them", async () => {
    const kept: number[] = [];
    const reporter = startCarrierSnapshotReporter({
      state: { putCarrierSnapshots: async (_, __, ttlMs) => void kept.push(ttlMs) },
      channel: 'sms',
      reporter: 'rātā:2:sms',
      snapshot: () => [bind(1)],
      log: createLogger(),
      everyMs: 1000,
    });
    await eventually(() => kept.length > 0);
    // The console calls a bind down once it is 5 s old; a snapshot that expired then would vanish instead.
    expect(kept[0]).toBe(2 * 60 * 1000);
    await reporter.stop();
  });
});
