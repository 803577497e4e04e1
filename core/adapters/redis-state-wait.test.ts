import { afterAll, describe, expect, it } from 'vitest';
import { unique } from './contract-support';
import { createRedisState } from './redis-state';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from '../../test/support/redis-keys';

// The shared test Redis runs without replicas: a write that must reach one can never be acknowledged.
describe('Redis hot state waiting for replicas on a single Redis', () => {
  const prefix = randomPrefix();
  afterAll(() => deleteRedisKeys(prefix));

  it('fails a write no replica confirmed as unavailable, instead of acknowledging it', async () => {
    const state = createRedisState({ redis: REDIS_URL, prefix, waitReplicas: 1, waitTimeoutMs: 50 });
    try {
      await expect(state.advanceStatuses([{ id: unique('msg'), status: 'accepted', at: 1 }])).rejects.toMatchObject({
        code: 'unavailable',
        message: expect.stringMatching(/advancing statuses: only 0 of 1 Redis replicas confirmed a write within 50 ms/),
      });
      await expect(state.cancelSends([unique('msg')])).rejects.toMatchObject({ code: 'unavailable' });
    } finally {
      await state.close();
    }
  });

  it('acknowledges on the master alone when asked to wait for no replica', async () => {
    const state = createRedisState({ redis: REDIS_URL, prefix, waitReplicas: 0 });
    try {
      const id = unique('msg');
      expect(await state.advanceStatuses([{ id, status: 'accepted', at: 1 }])).toEqual([true]);
      expect(await state.getStatus(id)).toEqual({ status: 'accepted', at: 1 });
    } finally {
      await state.close();
    }
  });
});
