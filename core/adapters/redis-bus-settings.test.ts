import { describe, expect, it } from 'vitest';
import { resolveRedisBusSettings } from './redis-bus-settings';

describe('the Redis bus settings', () => {
  it('fill in the documented defaults, renewing leases three times per lease', () => {
    expect(resolveRedisBusSettings({})).toEqual({
      partitions: 8,
      prefix: 'hermod',
      claimIdleMs: 5000,
      blockMs: 1000,
      maxLen: undefined,
      leaseMs: 5000,
      renewEveryMs: 1666,
      retryDelayMs: 50,
      maxRetryDelayMs: 2000,
      closeTimeoutMs: 10_000,
      trimEveryMs: 5000,
      keepAcknowledgedMs: 10_000,
    });
  });

  it('bring values out of range into range and round counts down', () => {
    const settings = resolveRedisBusSettings({
      partitions: 0.5,
      claimIdleMs: -1,
      blockMs: 0,
      maxLen: 0,
      leaseMs: 10,
      renewEveryMs: 1,
      trimEveryMs: 0,
      keepAcknowledgedMs: -5,
    });
    expect(settings).toMatchObject({
      partitions: 1,
      claimIdleMs: 0,
      blockMs: 1,
      maxLen: 1,
      leaseMs: 50,
      renewEveryMs: 10,
      trimEveryMs: 10,
      keepAcknowledgedMs: 0,
    });
    expect(resolveRedisBusSettings({ partitions: 12.9, maxLen: 1000.7, prefix: 'hermod-tēnā' })).toMatchObject({
      partitions: 12,
      maxLen: 1000,
      prefix: 'hermod-tēnā',
    });
  });

  it('are frozen, read once', () => {
    expect(Object.isFrozen(resolveRedisBusSettings({}))).toBe(true);
  });
});
