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
});
