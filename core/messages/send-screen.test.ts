import { describe, expect, it } from 'vitest';
import { message } from '../adapters/history-contract';
import { createMemoryState } from '../adapters/memory-state';
import type { MessageRecord } from '../ports/message-history';
import { createSendScreen, quotaPeriod } from './send-screen';

const record = (destination: string, extra: Partial<MessageRecord> = {}): MessageRecord =>
  message({ applicationId: 'kōrero', destination, content: 'Kia ora, e hoa mā — tēnā koe 👋🏽', segments: 1, ...extra });

describe('send screen', () => {
  it('takes quota only for what passes the block lists and opt-outs, in order, and exempts opt-out confirmations', async () => {
    const state = createMemoryState();
    await state.setBlocks([{ scope: '', prefix: '+8190', blocked: true }]);
    await state.setOptOuts([{ applicationId: 'kōrero', handset: '+64210000002', optedOut: true }]);
    const screen = createSendScreen({
      state,
      quotaOf: async (app) => (app === 'kōrero' ? { messages: 2, period: 'day' } : undefined),
      exempt: (r) => r.via === 'confirmation',
    });
    const verdicts = await screen.screen([
      record('+819012345678'),
      record('+64210000001'),
      record('+64210000002'),
      record('+64210000002', { via: 'confirmation' }),
      record('+64210000003'),
      record('+64210000004'),
      record('+64210000005', { applicationId: 'no-quota' }),
    ]);
    expect(verdicts.map((v) => (v.send ? 'send' : v.status))).toEqual(['blocked', 'send', 'blocked', 'send', 'send', 'deficient', 'send']);
    expect(verdicts[0]).toMatchObject({ detail: 'destination blocked by the operator (+8190)' });
    expect(verdicts[2]).toMatchObject({ detail: 'destination opted out' });
    expect(verdicts[5]).toMatchObject({ detail: "over the application's quota of 2 messages per day" });
  });

  it('names a quota of one message in the singular', async () => {
    const screen = createSendScreen({ state: createMemoryState(), quotaOf: async () => ({ messages: 1, period: 'hour' }), exempt: () => false });
    const verdicts = await screen.screen([record('+64210000001'), record('+64210000002')]);
    expect(verdicts.map((v) => (v.send ? 'send' : v.status))).toEqual(['send', 'deficient']);
    expect(verdicts[1]).toMatchObject({ detail: "over the application's quota of 1 message per hour" });
  });

  it('counts calendar periods in UTC, each with the time left in it', () => {
    const t = Date.parse('2026-12-31T23:30:00.000Z');
    expect(quotaPeriod('hour', t)).toEqual({ start: '2026-12-31T23:00:00.000Z', startMs: Date.parse('2026-12-31T23:00:00.000Z'), endsInMs: 30 * 60_000 });
    expect(quotaPeriod('day', t)).toEqual({ start: '2026-12-31T00:00:00.000Z', startMs: Date.parse('2026-12-31T00:00:00.000Z'), endsInMs: 30 * 60_000 });
    expect(quotaPeriod('month', t)).toEqual({ start: '2026-12-01T00:00:00.000Z', startMs: Date.parse('2026-12-01T00:00:00.000Z'), endsInMs: 30 * 60_000 });
    expect(quotaPeriod('month', Date.parse('2026-02-10T00:00:00Z')).start).toBe('2026-02-01T00:00:00.000Z');
  });

  it('starts a period’s counter from the sends history has of it, asking history once per counter, and again only if it could not say', async () => {
    const t = Date.parse('2026-12-01T12:00:00.000Z');
    const asked: [string, number][] = [];
    let historyAnswers = false;
    const screen = createSendScreen({
      state: createMemoryState(),
      quotaOf: async () => ({ messages: 5, period: 'day' }),
      exempt: () => false,
      usedSince: async (app, since) => {
        asked.push([app, since]);
        if (!historyAnswers) throw new Error('history is away');
        return 3; // sent this morning, before the quota was set
      },
      now: () => t,
    });
    // History away: the counter starts at 0 for now, and history is asked again next time.
    expect((await screen.screen([record('+64210000001')])).map((v) => v.send)).toEqual([true]);
    historyAnswers = true;
    const sends = (n: number) => screen.screen(Array.from({ length: n }, (_, i) => record(`+6421000001${i}`)));
    // The counter exists (1 taken): its count is kept, whatever history says.
    expect((await sends(5)).map((v) => (v.send ? 'send' : v.status))).toEqual(['send', 'send', 'send', 'send', 'deficient']);
    expect((await sends(1)).map((v) => (v.send ? 'send' : v.status))).toEqual(['deficient']);
    expect(asked).toEqual([
      ['kōrero', Date.parse('2026-12-01T00:00:00.000Z')],
      ['kōrero', Date.parse('2026-12-01T00:00:00.000Z')],
    ]);

    // A new counter (another process's in-memory state, started again): it starts from the 3 sent.
    const restarted = createSendScreen({
      state: createMemoryState(),
      quotaOf: async () => ({ messages: 5, period: 'day' }),
      exempt: () => false,
      usedSince: async () => 3,
      now: () => t,
    });
    const verdicts = await restarted.screen(Array.from({ length: 3 }, (_, i) => record(`+6421000002${i}`)));
    expect(verdicts.map((v) => (v.send ? 'send' : v.status))).toEqual(['send', 'send', 'deficient']);
  });

  it('does not hold sends up for a history slower than its wait: the counter starts without the count, and history is not asked again', async () => {
    let asked = 0;
    const screen = createSendScreen({
      state: createMemoryState(),
      quotaOf: async () => ({ messages: 2, period: 'month' }),
      exempt: () => false,
      usedSince: () => {
        asked++;
        return new Promise<number>((resolve) => setTimeout(() => resolve(2), 5_000).unref());
      },
      seedWaitMs: 50,
    });
    const started = performance.now();
    const verdicts = await screen.screen([record('+64210000001'), record('+64210000002'), record('+64210000003')]);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(verdicts.map((v) => (v.send ? 'send' : v.status))).toEqual(['send', 'send', 'deficient']);
    await screen.screen([record('+64210000004')]);
    expect(asked).toBe(1);
  });

  it('seeds a counter again from history once hot state is heard to have lost data, so a Redis back empty does not start the period over', async () => {
    let state = createMemoryState();
    let sent = 0;
    const screen = createSendScreen({
      // Hot state as a Redis that may come back empty: the screen keeps its handle, the data under it goes.
      state: new Proxy({} as ReturnType<typeof createMemoryState>, { get: (_, name) => Reflect.get(state, name) }),
      quotaOf: async () => ({ messages: 5, period: 'day' }),
      exempt: () => false,
      // History has every message sent.
      usedSince: async () => sent,
    });
    const sends = async (n: number) => {
      const verdicts = await screen.screen(Array.from({ length: n }, (_, i) => record(`+6421000003${i}`)));
      sent += verdicts.filter((v) => v.send).length;
      return verdicts.map((v) => (v.send ? 'send' : v.status));
    };
    expect(await sends(3)).toEqual(['send', 'send', 'send']);
    state = createMemoryState();
    screen.hotStateLost();
    expect(await sends(3)).toEqual(['send', 'send', 'deficient']);
    expect(sent).toBe(5);
  });
});
