import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import type { MessageRecord } from '../ports/message-history';
import { createKeyedSends, storedKeyedMessages } from './keyed-sends';
import { message } from '../adapters/history-contract';
import { createMemoryState } from '../adapters/memory-state';
import { hashedUuid } from '../../lib/uuid';

const record = (id: string): MessageRecord => message({ id, applicationId: 'app-1', numericId: 0 });

/** A store that records what it was given and answers each with a numeric id of its own. */
function recordingStore() {
  const stored: string[] = [];
  let next = 100;
  return {
    stored,
    store: async (records: MessageRecord[]) =>
      records.map((r) => {
        stored.push(r.id);
        return { ok: true as const, id: r.id, numericId: next++ };
      }),
  };
}

describe('keyed sends', () => {
  it('answers a keyed message history already holds with the stored one, marked as a replay, and stores only the rest', async () => {
    const held = { ...record('k-1'), numericId: 7 };
    const sends = createKeyedSends(async (ids) => (ids.includes('k-1') ? [held] : []));
    const { stored, store } = recordingStore();
    const answers = await sends.accept([record('k-1'), record('k-2'), record('plain')], [true, true, false], store);
    expect(answers).toEqual([
      { ok: true, id: 'k-1', numericId: 7, replayed: true },
      { ok: true, id: 'k-2', numericId: 100 },
      { ok: true, id: 'plain', numericId: 101 },
    ]);
    expect(stored).toEqual(['k-2', 'plain']);
  });

  it('stores a keyed message once when its retry arrives while the first try is still being stored', async () => {
    const sends = createKeyedSends(async () => []);
    const { stored, store } = recordingStore();
    let letGo!: () => void;
    const slow = async (records: MessageRecord[]) => {
      await new Promise<void>((r) => {
        letGo = r;
      });
      return store(records);
    };
    const first = sends.accept([record('k-1')], [true], slow);
    await new Promise((r) => setImmediate(r));
    const retry = sends.accept([record('k-1')], [true], store);
    letGo();
    // The retry is answered with the first try's message, as a replay of it.
    expect(await Promise.all([first, retry])).toEqual([[{ ok: true, id: 'k-1', numericId: 100 }], [{ ok: true, id: 'k-1', numericId: 100, replayed: true }]]);
    // The same key twice in one call, too.
    const both = await sends.accept([record('k-9'), record('k-9')], [true, true], store);
    expect(both[1]).toEqual({ ...both[0], replayed: true });
    expect(stored).toEqual(['k-1', 'k-9']);
  });

  it('refuses keyed messages as unavailable when history cannot say whether they are stored, and stores the unkeyed', async () => {
    const sends = createKeyedSends(async () => {
      throw new HermodError('unavailable', 'history is not answering');
    });
    const { stored, store } = recordingStore();
    const [keyed, plain] = await sends.accept([record('k-1'), record('plain')], [true, false], store);
    expect(keyed).toMatchObject({ ok: false, error: { code: 'unavailable' } });
    expect((keyed as { error: HermodError }).error.message).toContain('history is not answering');
    expect(plain).toEqual({ ok: true, id: 'plain', numericId: 100 });
    expect(stored).toEqual(['plain']);
    // Nothing of the failed try is left behind: the retry looks again.
    const again = createKeyedSends(async () => []);
    expect(await again.accept([record('k-1')], [true], store)).toEqual([{ ok: true, id: 'k-1', numericId: 101 }]);
  });

  it('does not ask history about messages sent without a key', async () => {
    let asked = 0;
    const sends = createKeyedSends(async () => {
      asked += 1;
      return [];
    });
    await sends.accept([record('a'), record('b')], [false, false], recordingStore().store);
    expect(asked).toBe(0);
  });
});

describe('finding the stored messages of keyed sends', () => {
  /** History holding `held` (of which `earlier` were stored before the start), hot state knowing `statuses`; counts what history is asked. */
  function lookups(o: { held?: MessageRecord[]; earlier?: MessageRecord[]; statuses?: string[]; recent?: MessageRecord[]; loadFails?: boolean }) {
    const asked: string[][] = [];
    const loads: number[] = [];
    let t = 1_000_000;
    const find = storedKeyedMessages({
      history: {
        findMessages: async (ids) => {
          asked.push([...ids]);
          return (o.held ?? []).filter((m) => ids.includes(m.id));
        },
        keyedMessagesSince: async (since) => {
          loads.push(since);
          if (o.loadFails) throw new Error('chDB is not answering');
          return (o.earlier ?? []).map((m) => ({ id: m.id, numericId: m.numericId, applicationId: m.applicationId }));
        },
      },
      state: { getStatus: async (id) => ((o.statuses ?? []).includes(id) ? ({ status: 'received', at: 0, stage: 5 } as never) : undefined) },
      recent: { get: (id) => (o.recent ?? []).find((m) => m.id === id) },
      historyForMs: 60_000,
      now: () => t,
    });
    return { find, asked, loads, later: (ms: number) => (t += ms) };
  }

  it('finds, in the first minutes after core started, the keyed messages stored in as many minutes before, loaded once, without a query each', async () => {
    const before = { ...record('k-1'), numericId: 7 };
    const { find, asked, loads } = lookups({ earlier: [before] });
    expect((await find(['k-1', 'k-2'])).map((m) => [m.id, m.numericId])).toEqual([['k-1', 7]]);
    expect(await find(['k-3'])).toEqual([]);
    expect(loads).toEqual([1_000_000 - 60_000]);
    expect(asked).toEqual([]);
  });

  it('asks history about each keyed message in that window when the load failed', async () => {
    const { find, asked } = lookups({ held: [{ ...record('k-1'), numericId: 7 }], loadFails: true });
    expect((await find(['k-1', 'k-2'])).map((m) => m.id)).toEqual(['k-1']);
    expect(asked).toEqual([['k-1', 'k-2']]);
  });

  it('then asks history only about messages hot state knows, for their numbers', async () => {
    const { find, asked, later } = lookups({ held: [{ ...record('k-1'), numericId: 7 }, record('k-3')], statuses: ['k-1'] });
    later(60_000);
    expect((await find(['k-1', 'k-2', 'k-3'])).map((m) => m.id)).toEqual(['k-1']);
    expect(asked).toEqual([['k-1']]);
  });

  it('looks in history again for the window after hot state lost its data (Redis back empty), and finds a retried key sent before', async () => {
    const before = { ...record('k-1'), numericId: 7 };
    const { find, loads, later } = lookups({ earlier: [before] });
    later(60_000);
    // Past the window after the start, and hot state forgot k-1: it would be stored and sent again.
    expect(await find(['k-1'])).toEqual([]);
    find.reopen();
    expect((await find(['k-1'])).map((m) => [m.id, m.numericId])).toEqual([['k-1', 7]]);
    // The keyed messages of the window before the loss, loaded once.
    expect(loads).toEqual([1_000_000]);
  });

  it('answers from core’s recent messages without asking anyone', async () => {
    const { find, asked, loads } = lookups({ recent: [record('k-1')] });
    expect((await find(['k-1'])).map((m) => m.id)).toEqual(['k-1']);
    expect(asked).toEqual([]);
    expect(loads).toEqual([]);
  });

  it('refuses as unavailable a message hot state knows that history does not have yet, rather than store it twice', async () => {
    const { find, later } = lookups({ statuses: ['k-1'] });
    later(60_000);
    await expect(find(['k-1'])).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('finds a keyed message that ended hours ago, outside the window, while its key could still be retried; an unkeyed one leaves hot state after the final minute', async () => {
    let t = 1_000_000;
    const state = createMemoryState({ finalTtlMs: 60_000, keyedFinalTtlMs: 24 * 3_600_000, now: () => t });
    const keyed = { ...record(hashedUuid('app-1', 'tono-Māori-1')), numericId: 7 };
    // A fixed id: one random id in 1,024 carries the hashed mark, and is kept as long as a keyed one.
    const unkeyed = { ...record('6f1c2d3e-0a4b-4c5d-8e6f-7a8b9c0d1e2f'), numericId: 8 };
    await state.advanceStatuses(
      [keyed, unkeyed].flatMap((m) => [
        { id: m.id, status: 'queued' as const, at: t },
        { id: m.id, status: 'received' as const, at: t },
      ]),
    );
    const find = storedKeyedMessages({
      history: { findMessages: async (ids) => [keyed, unkeyed].filter((m) => ids.includes(m.id)), keyedMessagesSince: async () => [] },
      state,
      recent: { get: () => undefined },
      historyForMs: 60_000,
      now: () => t,
    });
    t += 5 * 3_600_000;
    expect((await find([keyed.id, unkeyed.id])).map((m) => [m.id, m.numericId])).toEqual([[keyed.id, 7]]);
    t += 20 * 3_600_000;
    expect(await find([keyed.id])).toEqual([]);
    await state.close();
  });
});
