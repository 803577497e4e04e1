import { describe, expect, it } from 'vitest';
import { smsBatchSize } from './sms-worker-pool';

const binds = (...windows: [windowSize: number, binds: number][]) => windows.map(([windowSize, binds]) => ({ windowSize, binds }));

describe('the SMS worker’s batch size', () => {
  it('holds twice every bind’s window across the partitions, so no job waits long behind a full window', () => {
    expect(smsBatchSize(binds([256, 1]), 16)).toBe(32);
    expect(smsBatchSize(binds([256, 4], [64, 2]), 16)).toBe(144);
    expect(smsBatchSize(binds([256, 1]), 1)).toBe(512);
  });

  it('takes at least 8 jobs a batch, and at most 512', () => {
    expect(smsBatchSize(binds([64, 1]), 64)).toBe(8);
    expect(smsBatchSize(binds([10_000, 8]), 16)).toBe(512);
    expect(smsBatchSize(binds(), 16)).toBe(8);
  });
});
