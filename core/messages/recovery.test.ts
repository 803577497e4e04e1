import { describe, expect, it } from 'vitest';
import type { MessageHistory, StoredMessage } from '../ports/message-history';
import type { HotState } from '../ports/state';
import type { MessageIntake } from './message-intake';
import { createRecentMessages } from './recent-messages';
import { recoverUnfinished } from './recovery';
import { createLogger } from '../../lib/log';
import { message } from '../adapters/history-contract';

const stored = (id: string, via: string): StoredMessage => ({
  ...message({ id, via, applicationId: 'acme', content: 'Kia ora — Māori, 你好 👋🏽' }),
  status: 'accepted',
  statusAt: 1_700_000_000_000,
});

/** History that holds `unfinished` and serves it in pages, in order. */
function historyOf(unfinished: StoredMessage[]): Pick<MessageHistory, 'listUnfinished'> {
  return {
    async listUnfinished(limit, after) {
      const start = after ? unfinished.findIndex((m) => m.id === after.id) + 1 : 0;
      return unfinished.slice(start, start + limit);
    },
  };
}

describe('recovery of unfinished messages after a start', () => {
  it('hands every unfinished message to its channel again and holds the API ones in memory, so their statuses need no history lookup', async () => {
    const unfinished = [...Array.from({ length: 7000 }, (_, i) => stored(`api-${i}`, 'sms_v2')), stored('campaign-1', 'campaign')];
    const dispatched: string[] = [];
    const recent = createRecentMessages();
    const count = await recoverUnfinished({
      history: historyOf(unfinished) as MessageHistory,
      state: { advanceStatuses: async () => [] } as unknown as HotState,
      intake: {
        dispatch: async (page: readonly StoredMessage[]) => void dispatched.push(...page.map((m) => m.id)),
        dispatchHeld: async (page: readonly StoredMessage[]) => void dispatched.push(...page.map((m) => m.id)),
      } as unknown as MessageIntake,
      recent,
      log: createLogger({ test: 'recovery' }),
    });
    expect(count).toBe(7001);
    expect(dispatched).toEqual(unfinished.map((m) => m.id));
    expect(recent.get('api-0')?.content).toBe('Kia ora — Māori, 你好 👋🏽');
    expect(recent.get('api-6999')?.applicationId).toBe('acme');
    // A crashed campaign's million members would push out what API clients poll for.
    expect(recent.get('campaign-1')).toBeUndefined();
  });

  it('tells the accepted status again of each message still at accepted, before handing it over, and of no other', async () => {
    // Stored, then the process died before its accepted status was told (the callback made): nothing else would tell it.
    const unfinished = [stored('at-accepted', 'sms_v2'), { ...stored('at-queued', 'sms_v2'), status: 'queued' as const }];
    const order: string[] = [];
    await recoverUnfinished({
      history: historyOf(unfinished) as MessageHistory,
      state: { advanceStatuses: async () => [] } as unknown as HotState,
      intake: { dispatch: async (page: readonly StoredMessage[]) => void order.push(...page.map((m) => `dispatch ${m.id}`)) } as unknown as MessageIntake,
      recent: createRecentMessages(),
      tellAccepted: (changes) => order.push(...changes.map((c) => `${c.status} ${c.messageId} ${c.applicationId} ${c.channel} ${c.at}`)),
      log: createLogger({ test: 'recovery' }),
    });
    expect(order).toEqual(['accepted at-accepted acme sms 1700000000000', 'dispatch at-accepted', 'dispatch at-queued']);
  });
});

describe('recovery while core already takes new messages', () => {
  const quiet = createLogger({ test: 'recovery' });
  const state = { advanceStatuses: async () => [] } as unknown as HotState;

  it('asks only for messages accepted before its start, and goes on from where it was when history fails to answer, handing none over twice', async () => {
    const unfinished = Array.from({ length: 12_000 }, (_, i) => stored(`api-${i}`, i % 2 ? 'sms_v2' : 'campaign'));
    const inner = historyOf(unfinished);
    let calls = 0;
    const bounds: (number | undefined)[] = [];
    const history = {
      async listUnfinished(limit: number, after?: { acceptedAt: number; id: string }, acceptedBefore?: number) {
        bounds.push(acceptedBefore);
        // The second page's first try: the engine is busy (a ClickHouse server restarting).
        if (++calls === 2) throw new Error('history is unavailable — tē taea');
        return inner.listUnfinished(limit, after);
      },
    } as MessageHistory;
    const dispatched: string[] = [];
    const count = await recoverUnfinished({
      history,
      state,
      intake: {
        dispatch: async (page: readonly StoredMessage[]) => void dispatched.push(...page.map((m) => m.id)),
        dispatchHeld: async (page: readonly StoredMessage[]) => void dispatched.push(...page.map((m) => m.id)),
      } as unknown as MessageIntake,
      recent: createRecentMessages(),
      log: quiet,
      acceptedBefore: 1_700_000_000_123,
      retryMs: 5,
    });
    expect(count).toBe(12_000);
    // Each once (a page's campaign messages are screened after the page's others are handed over).
    expect([...dispatched].sort()).toEqual(unfinished.map((m) => m.id).sort());
    expect(new Set(bounds)).toEqual(new Set([1_700_000_000_123]));
  });

  it('stops between pages once core stops', async () => {
    const unfinished = Array.from({ length: 12_000 }, (_, i) => stored(`api-${i}`, 'sms_v2'));
    let stopping = false;
    const dispatched: string[] = [];
    const said: string[] = [];
    const log = { ...quiet, info: (msg: string, fields?: Record<string, unknown>) => void said.push(`${msg} ${JSON.stringify(fields)}`) };
    await recoverUnfinished({
      history: historyOf(unfinished) as MessageHistory,
      state,
      intake: {
        dispatch: async (page: readonly StoredMessage[]) => {
          dispatched.push(...page.map((m) => m.id));
          stopping = true;
        },
      } as unknown as MessageIntake,
      recent: createRecentMessages(),
      log: log as typeof quiet,
      stopping: () => stopping,
    });
    expect(dispatched).toHaveLength(5000);
    // Not told as done: an operator reading the log would think the 7,000 others were handed over.
    expect(said).toEqual(['recovery of unfinished messages stopped with core; the next start goes on {"count":5000}']);
  });

  it("screens a campaign's messages not yet with a carrier again (a STOP may have come while a pause held them), and hands every other over as it was", async () => {
    const unfinished = [
      { ...stored('campaign-queued', 'campaign'), status: 'queued' as const },
      { ...stored('campaign-submitted', 'campaign'), status: 'submitted' as const },
      { ...stored('api-queued', 'sms_v2'), status: 'queued' as const },
      stored('campaign-accepted', 'campaign'),
    ];
    const handed: string[] = [];
    await recoverUnfinished({
      history: historyOf(unfinished) as MessageHistory,
      state: { advanceStatuses: async () => [] } as unknown as HotState,
      intake: {
        dispatch: async (page: readonly StoredMessage[]) => void handed.push(...page.map((m) => `as it was ${m.id}`)),
        dispatchHeld: async (page: readonly StoredMessage[]) => void handed.push(...page.map((m) => `screened ${m.id}`)),
      } as unknown as MessageIntake,
      recent: createRecentMessages(),
      log: createLogger({ test: 'recovery' }),
    });
    expect(handed).toEqual(['as it was campaign-submitted', 'as it was api-queued', 'screened campaign-queued', 'screened campaign-accepted']);
  });
});
