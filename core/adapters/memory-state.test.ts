import { beforeEach, describe, expect, it } from 'vitest';
import { createMemoryState } from './memory-state';
import { describeStateContract } from './state-contract';
import { memoryEntries } from '../../lib/metrics';

/** What hermod_memory_entries shows for a structure now (0 when absent). */
async function gauge(structure: string): Promise<number> {
  const { values } = await memoryEntries.get();
  return values.find((v) => v.labels.structure === structure)?.value ?? 0;
}

// The gauge sums every hot state of the process: the other tests' (never
// closed, 24 h to live) are counted once before each test and taken off.
let others = new Map<string, number>();
beforeEach(async () => {
  const { values } = await memoryEntries.get();
  others = new Map(values.map((v) => [String(v.labels.structure), v.value]));
});
/** What this test's hot state holds in a structure, by hermod_memory_entries. */
async function entries(structure: string): Promise<number> {
  return (await gauge(structure)) - (others.get(structure) ?? 0);
}

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

  it('holds one entry a message, its status with its submitted and cancelled marks', async () => {
    const state = createMemoryState();
    const ids = ['kia-ora-1', 'kia-ora-2', 'kia-ora-3'];
    await state.advanceStatuses(ids.map((id) => ({ id, status: 'queued' as const, at: 1 })));
    await state.putCarrierIds(ids.map((id) => ({ carrierId: `c-${id}`, messageId: id })));
    await state.cancelSends(['kia-ora-2', 'tēnā-koe-never-seen']);
    expect(await entries('state:statuses')).toBe(4);
    expect(await state.wereSubmitted([...ids, 'tēnā-koe-never-seen'])).toEqual([true, true, true, false]);
    expect(await state.wereCancelled([...ids, 'tēnā-koe-never-seen'])).toEqual([false, true, false, true]);
    // A message marked before it has a status has none yet, and takes any first status.
    expect(await state.getStatus('tēnā-koe-never-seen')).toBeUndefined();
    expect(await state.advanceStatuses([{ id: 'tēnā-koe-never-seen', status: 'failed', at: 2 }])).toEqual([true]);
    expect(await state.wereCancelled(['tēnā-koe-never-seen'])).toEqual([true]);
    await state.close();
  });

  it('forgets a final status, its carrier id and its submitted mark the final time to live after the final status', async () => {
    let now = 0;
    const state = createMemoryState({ ttlMs: 60_000, finalTtlMs: 1000, now: () => now });
    await state.putCarrierIds([{ carrierId: 'carrier-tēnā-👋🏽', messageId: 'm' }]);
    await state.advanceStatuses([{ id: 'm', status: 'submitted', at: 1 }]);
    await state.cancelSends(['m']);
    now = 5000;
    await state.advanceStatuses([{ id: 'm', status: 'received', at: 5000, carrierId: 'carrier-tēnā-👋🏽' }]);
    now = 5999;
    // Late duplicates are still refused meanwhile.
    expect(await state.advanceStatuses([{ id: 'm', status: 'sent', at: 2 }])).toEqual([false]);
    expect(await state.getMessageIdByCarrierId('carrier-tēnā-👋🏽')).toBe('m');
    now = 6000;
    expect(await state.getStatus('m')).toBeUndefined();
    expect(await state.getMessageIdByCarrierId('carrier-tēnā-👋🏽')).toBeUndefined();
    expect(await state.wereSubmitted(['m'])).toEqual([false]);
    expect(await state.wereCancelled(['m'])).toEqual([false]);
  });

  it('keeps a mark written after the final status for the full time to live: a failed attempt cancelled is never sent when its job comes again', async () => {
    let now = 0;
    const state = createMemoryState({ ttlMs: 60_000, finalTtlMs: 1000, now: () => now });
    await state.advanceStatuses([{ id: 'attempt-ā', status: 'queued', at: 0 }]);
    await state.advanceStatuses([{ id: 'attempt-ā', status: 'failed', at: 1 }]);
    await state.cancelSends(['attempt-ā']);
    await state.putCarrierIds([{ carrierId: 'c-👋🏽', messageId: 'attempt-ā' }]);
    now = 2000;
    // The final status has gone with its minute; the marks made after it stay.
    expect(await state.getStatus('attempt-ā')).toBeUndefined();
    expect(await state.wereCancelled(['attempt-ā'])).toEqual([true]);
    expect(await state.wereSubmitted(['attempt-ā'])).toEqual([true]);
    now = 60_001;
    expect(await state.wereCancelled(['attempt-ā'])).toEqual([false]);
  });

  it('refuses a status time that is no number rather than lose the marks beside it', async () => {
    const state = createMemoryState();
    await state.cancelSends(['m']);
    await expect(state.advanceStatuses([{ id: 'm', status: 'queued', at: Number.NaN }])).rejects.toThrow(RangeError);
    expect(await state.wereCancelled(['m'])).toEqual([true]);
  });

  it('lets read follow received within the final time to live without renewing it', async () => {
    let now = 0;
    const state = createMemoryState({ finalTtlMs: 1000, now: () => now });
    await state.advanceStatuses([{ id: 'm', status: 'received', at: 0 }]);
    now = 500;
    expect(await state.advanceStatuses([{ id: 'm', status: 'read', at: 500 }])).toEqual([true]);
    expect(await state.getStatus('m')).toEqual({ status: 'read', at: 500 });
    now = 1000;
    expect(await state.getStatus('m')).toBeUndefined();
  });

  it('keeps at most the maximum of final statuses, dropping the oldest first, while messages in flight stay', async () => {
    const state = createMemoryState({ maxFinalEntries: 2 });
    await state.advanceStatuses([{ id: 'in-flight', status: 'sent', at: 1 }]);
    await state.advanceStatuses(['a', 'b', 'c'].map((id, i) => ({ id, status: 'received' as const, at: i })));
    expect(await state.getStatus('a')).toBeUndefined();
    expect((await Promise.all(['b', 'c', 'in-flight'].map((id) => state.getStatus(id)))).map((s) => s?.status)).toEqual(['received', 'received', 'sent']);
  });

  it('keeps at most the maximum of handsets for reply routing, dropping the least recently messaged first', async () => {
    const state = createMemoryState({ maxHandsets: 2 });
    const handsets = ['+64210000001', '+64210000002', '+64210000003'];
    await state.rememberLastMessages(handsets.map((handset, i) => ({ handset, messageId: `m${i}`, applicationId: 'kia-ora', source: 'TĒNĀ' })));
    expect(await state.getLastMessage(handsets[0]!)).toBeUndefined();
    expect((await state.getReplyContext(handsets[0]!, 'TĒNĀ')).lastFromAddress).toBeUndefined();
    expect(await state.getLastMessage(handsets[2]!)).toEqual({ messageId: 'm2', applicationId: 'kia-ora' });
    expect((await state.getReplyContext(handsets[2]!, 'TĒNĀ')).lastFromAddress).toEqual({ messageId: 'm2', applicationId: 'kia-ora' });
  });

  it('forgets idempotency keys whose time to live has passed even if they are never asked for again', async () => {
    let now = 0;
    const state = createMemoryState({ now: () => now });
    for (let i = 0; i < 1000; i++) await state.claimIdempotencyKey(`kia-ora:key-${i}-👋🏽`, 'fp', 'claim-1', 100);
    now = 100;
    await state.claimIdempotencyKey('kia-ora:tēnā-koe', 'fp', 'claim-1', 100);
    expect(await entries('state:idempotency_keys')).toBe(1);
    await state.close();
  });

  it('drops the rate windows of passed seconds once a new second starts', async () => {
    let now = 0;
    const state = createMemoryState({ now: () => now });
    for (let i = 0; i < 500; i++) await state.takeRateTokens(`app-${i}`, 10, 1);
    expect(await entries('state:rate_windows')).toBe(500);
    now = 1000;
    await state.takeRateTokens('app-ā', 10, 1);
    expect(await entries('state:rate_windows')).toBe(1);
    await state.close();
  });

  it('counts in hermod_memory_entries only what is in flight or finished within the final time to live', async () => {
    let now = 0;
    const state = createMemoryState({ finalTtlMs: 1000, now: () => now });
    const ids = Array.from({ length: 100 }, (_, i) => `m-${i}`);
    await state.putCarrierIds(ids.map((id) => ({ carrierId: `c-${id}`, messageId: id })));
    await state.advanceStatuses(ids.map((id) => ({ id, status: 'submitted' as const, at: 0 })));
    expect(await entries('state:statuses')).toBe(100);
    await state.advanceStatuses(ids.slice(0, 90).map((id) => ({ id, status: 'received' as const, at: 1, carrierId: `c-${id}` })));
    now = 1000;
    // No call since: reading the gauge drops what has expired.
    expect(await entries('state:statuses')).toBe(10);
    expect(await entries('state:carrier_ids')).toBe(10);
    await state.close();
    expect(await entries('state:statuses')).toBe(0);
  });

  it('refuses calls once closed', async () => {
    const state = createMemoryState();
    await state.close();
    await expect(state.getStatus('m')).rejects.toMatchObject({ code: 'unavailable' });
  });
});
