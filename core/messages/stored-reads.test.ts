import { describe, expect, it } from 'vitest';
import type { MessageHistory, MessageRecord, StoredMessage } from '../ports/message-history';
import { message } from '../adapters/history-contract';
import { createStoredReads } from './stored-reads';

/** A history answering from a list, slowly as an engine does, counting its queries. */
function slowHistory(stored: StoredMessage[]) {
  const queries = { one: 0, many: 0, statuses: 0, largest: 0 };
  const later = <T>(value: T): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(value), 10));
  const history: Pick<MessageHistory, 'getMessage' | 'findMessages' | 'latestStatuses'> = {
    async getMessage(applicationId, id) {
      queries.one++;
      return later(stored.find((m) => m.id === id && m.applicationId === applicationId));
    },
    async findMessages(ids) {
      queries.many++;
      queries.largest = Math.max(queries.largest, ids.length);
      return later(stored.filter((m) => ids.includes(m.id)).map(({ status: _s, statusAt: _a, ...record }): MessageRecord => record));
    },
    async latestStatuses(ids) {
      queries.statuses++;
      return later(new Map(stored.filter((m) => ids.includes(m.id)).map((m) => [m.id, { status: m.status, at: m.statusAt }])));
    },
  };
  return { history, queries };
}

const storedMessage = (i: number, applicationId = 'app-acme'): StoredMessage => ({
  ...message({ applicationId, destination: `+642100${String(i).padStart(4, '0')}`, content: `Kia ora ${i} — 你好 👋🏽` }),
  status: i % 2 ? 'received' : 'submitted',
  statusAt: 1_000 + i,
});

describe('reads of stored messages', () => {
  it('asks history once for a read alone, as it always did', async () => {
    const m = storedMessage(1);
    const { history, queries } = slowHistory([m]);
    const reads = createStoredReads(history);
    expect(await reads.get('app-acme', m.id)).toEqual(m);
    expect(queries).toMatchObject({ one: 1, many: 0 });
  });

  it('answers reads that come while a query runs with one query for all of them, each its own message and status (after a restart: 700 polls took 8 s one by one)', async () => {
    const all = Array.from({ length: 300 }, (_, i) => storedMessage(i, i % 3 ? 'app-acme' : 'app-kāinga'));
    const { history, queries } = slowHistory(all);
    const reads = createStoredReads(history);
    const answers = await Promise.all(all.map((m) => reads.get('app-acme', m.id)));
    // Another application's message is not found by this one, as history's own read by application answers.
    expect(answers).toEqual(all.map((m) => (m.applicationId === 'app-acme' ? m : undefined)));
    expect(queries.one).toBe(1);
    expect(queries.many).toBe(1);
    expect(queries.largest).toBe(299);
  });

  it('keeps a batch to at most 1,000 ids, and answers an unknown id as not found', async () => {
    const all = Array.from({ length: 2_500 }, (_, i) => storedMessage(i));
    const { history, queries } = slowHistory(all);
    const reads = createStoredReads(history);
    const answers = await Promise.all([...all.map((m) => reads.get('app-acme', m.id)), reads.get('app-acme', 'no-such-message')]);
    expect(answers.slice(0, -1)).toEqual(all);
    expect(answers.at(-1)).toBeUndefined();
    expect(queries.largest).toBeLessThanOrEqual(1_000);
    expect(queries.many).toBeLessThanOrEqual(4);
  });

  it('fails the reads of a batch whose query failed, and answers the next ones', async () => {
    const m = storedMessage(7);
    const { history } = slowHistory([m]);
    let fail = true;
    const reads = createStoredReads({
      ...history,
      findMessages: async (ids) => {
        if (fail) throw new Error('history is unavailable — tē taea');
        return history.findMessages(ids);
      },
    });
    const first = reads.get('app-acme', m.id);
    const batched = [reads.get('app-acme', m.id), reads.get('app-acme', m.id)];
    await expect(Promise.all(batched)).rejects.toThrow(/tē taea/);
    await expect(first).resolves.toEqual(m);
    fail = false;
    const again = [reads.get('app-acme', m.id), reads.get('app-acme', m.id)];
    await expect(Promise.all(again)).resolves.toEqual([m, m]);
  });
});
