import { describe, expect, it } from 'vitest';
import type { MessageRecord } from '../ports/message-history';
import { createBatchedMessageLookup } from './batched-message-lookup';
import { createLogger } from '../../lib/log';
import { message } from '../adapters/history-contract';

const record = (id: string): MessageRecord => message({ id, applicationId: 'acme', content: 'Kia ora — tēnā koe 👋🏽' });

/** History holding `held`, counting the queries asked of it (each answered after a tick, as an engine would). */
function historyHolding(held: Map<string, MessageRecord>) {
  const queries: string[][] = [];
  return {
    queries,
    async findMessages(ids: readonly string[]) {
      queries.push([...ids]);
      await new Promise((r) => setTimeout(r, 5));
      return ids.flatMap((id) => (held.has(id) ? [held.get(id)!] : []));
    },
  };
}

const log = createLogger({ test: 'batched-message-lookup' });

describe('batched message lookup', () => {
  it('answers two thousand lookups made together with one query, and lookups made while it runs with one more', async () => {
    const held = new Map(Array.from({ length: 3000 }, (_, i) => [`m-${i}`, record(`m-${i}`)] as const));
    const history = historyHolding(held);
    const lookup = createBatchedMessageLookup({ history, log });

    const first = Promise.all(Array.from({ length: 2000 }, (_, i) => lookup.find(`m-${i}`)));
    await new Promise((r) => setTimeout(r, 1));
    const second = Promise.all(Array.from({ length: 1000 }, (_, i) => lookup.find(`m-${2000 + i}`)));

    expect((await first).map((m) => m?.id)).toEqual(Array.from({ length: 2000 }, (_, i) => `m-${i}`));
    expect((await second).every((m) => m?.content === 'Kia ora — tēnā koe 👋🏽')).toBe(true);
    expect(history.queries.map((q) => q.length)).toEqual([2000, 1000]);
    expect(lookup.pending).toBe(0);
  });

  it('asks once for an id looked up many times at once, and answers each lookup in the order made', async () => {
    const history = historyHolding(new Map([['m-1', record('m-1')]]));
    const lookup = createBatchedMessageLookup({ history, log });
    const order: string[] = [];
    await Promise.all(['queued', 'submitted', 'delivered'].map((status) => lookup.find('m-1').then(() => order.push(status))));
    expect(order).toEqual(['queued', 'submitted', 'delivered']);
    expect(history.queries).toEqual([['m-1']]);
  });

  it('finds a message history gets only later (another core flushes it) at a later try, and gives up on one it never gets', async () => {
    const held = new Map<string, MessageRecord>();
    const history = historyHolding(held);
    const lookup = createBatchedMessageLookup({ history, log, retryDelaysMs: [40, 120] });

    const late = lookup.find('late');
    const never = lookup.find('never');
    setTimeout(() => held.set('late', record('late')), 20);
    expect((await late)?.id).toBe('late');
    expect(await never).toBeUndefined();
    // Found at the second try; the other asked at every try, then given up.
    const asked = (id: string) => history.queries.filter((q) => q.includes(id)).length;
    expect([asked('late'), asked('never')]).toEqual([2, 3]);
  });

  it('answers nothing found when history cannot be asked, and keeps answering later lookups', async () => {
    let down = true;
    const lookup = createBatchedMessageLookup({
      history: {
        async findMessages(ids) {
          if (down) throw new Error('history (chDB): engine unavailable');
          return ids.map(record);
        },
      },
      log,
    });
    expect(await lookup.find('m-1')).toBeUndefined();
    down = false;
    expect((await lookup.find('m-1'))?.id).toBe('m-1');
  });

  it('splits more ids than one query takes over several queries', async () => {
    const held = new Map(Array.from({ length: 25 }, (_, i) => [`m-${i}`, record(`m-${i}`)] as const));
    const history = historyHolding(held);
    const lookup = createBatchedMessageLookup({ history, log, maxBatch: 10 });
    const found = await Promise.all(Array.from({ length: 25 }, (_, i) => lookup.find(`m-${i}`)));
    expect(found.every(Boolean)).toBe(true);
    expect(history.queries.map((q) => q.length)).toEqual([10, 10, 5]);
  });
});
