import { describe, expect, it } from 'vitest';
import { createMemoryState } from './memory-state';
import { describeStateContract } from './state-contract';

describeStateContract('in-memory', () => createMemoryState());

describe('in-memory hot state', () => {
  it('forgets a status once its time to live has passed since it was written', async () => {
    let now = 0;
    const state = createMemoryState({ ttlMs: 1000, now: () => now });
    await state.advanceStatuses([{ id: 'm', status: 'sent', at: 1 }]);
    now = 999;
    expect(await state.getStatus('m')).toEqual({ status: 'sent', at: 1 });
    now = 1000;
    expect(await state.getStatus('m')).toBeUndefined();
    // Forgotten means any status applies again.
    expect(await state.advanceStatuses([{ id: 'm', status: 'queued', at: 2 }])).toEqual([true]);
  });

  it('renews the time to live of a status that advances', async () => {
    let now = 0;
    const state = createMemoryState({ ttlMs: 1000, now: () => now });
    await state.advanceStatuses([{ id: 'm', status: 'queued', at: 1 }]);
    now = 800;
    await state.advanceStatuses([{ id: 'm', status: 'sent', at: 2 }]);
    now = 1500;
    expect(await state.getStatus('m')).toEqual({ status: 'sent', at: 2 });
  });

  it('forgets carrier ids after the time to live', async () => {
    let now = 0;
    const state = createMemoryState({ ttlMs: 50, now: () => now });
    await state.putCarrierIds([{ carrierId: 'c', messageId: 'm' }]);
    now = 60;
    expect(await state.getMessageIdByCarrierId('c')).toBeUndefined();
  });

  it('drops the entries first written longest ago beyond the maximum count', async () => {
    const state = createMemoryState({ maxEntries: 3 });
    await state.advanceStatuses([
      { id: 'a', status: 'accepted', at: 1 },
      { id: 'b', status: 'accepted', at: 1 },
      { id: 'c', status: 'accepted', at: 1 },
    ]);
    // Updating `a` keeps its place: it is still the oldest message.
    await state.advanceStatuses([{ id: 'a', status: 'queued', at: 2 }]);
    expect((await state.getStatus('a'))?.status).toBe('queued');
    await state.advanceStatuses([{ id: 'd', status: 'accepted', at: 3 }]);
    expect(await state.getStatus('a')).toBeUndefined();
    expect((await Promise.all(['b', 'c', 'd'].map((id) => state.getStatus(id)))).map((s) => s?.status)).toEqual(['accepted', 'accepted', 'accepted']);

    await state.putCarrierIds(['1', '2', '3', '4'].map((c) => ({ carrierId: c, messageId: `m${c}` })));
    expect(await state.getMessageIdByCarrierId('1')).toBeUndefined();
    expect(await state.getMessageIdByCarrierId('4')).toBe('m4');
  });

  it('refuses calls once closed', async () => {
    const state = createMemoryState();
    await state.close();
    await expect(state.getStatus('m')).rejects.toMatchObject({ code: 'unavailable' });
  });
});
