import { describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/log';
import { message } from '../adapters/history-contract';
import type { BusRecord } from '../ports/bus';
import { decodeJob } from '../ports/bus-payloads';
import type { AwaitingReceipt, MessageHistory } from '../ports/message-history';
import { askCarriersAboutReceipts } from './receipt-queries';

const awaiting = (n: number): AwaitingReceipt => ({
  ...message({ id: `m-${n}`, acceptedAt: 1_700_000_000_000 + n, destination: `+6421000${n}`, source: '', mask: 'Tāmaki', content: 'Kia ora — 你好 👋🏽' }),
  status: 'submitted',
  statusAt: 1_700_000_000_500 + n,
  carrierIds: [`smsc:${n.toString(16)}`, `smsc:${(n + 0x10000).toString(16)}`],
});

/** History that holds `messages` and serves them in pages, in order; fails the first `failures` asks. */
function historyOf(messages: AwaitingReceipt[], failures = 0): Pick<MessageHistory, 'listAwaitingReceipt'> & { asked: number } {
  return {
    asked: 0,
    async listAwaitingReceipt(limit, after) {
      this.asked++;
      if (failures-- > 0) throw new Error('history is away');
      const start = after ? messages.findIndex((m) => m.id === after.id) + 1 : 0;
      return messages.slice(start, start + limit);
    },
  };
}

function busOf(published: { topic: string; records: readonly BusRecord[] }[]) {
  return { publish: async (topic: string, records: readonly BusRecord[]) => void published.push({ topic, records }) };
}

describe('asking the carriers about messages whose receipts may be lost', () => {
  it('hands every SMS message with the carrier to its channel as a job naming its carrier ids, page after page, never as a send', async () => {
    const messages = Array.from({ length: 5003 }, (_, i) => awaiting(i));
    const published: { topic: string; records: readonly BusRecord[] }[] = [];
    const count = await askCarriersAboutReceipts({
      history: historyOf(messages),
      bus: busOf(published),
      log: createLogger({ test: 'receipt-queries' }),
      retryMs: 1,
    });
    expect(count).toBe(5003);
    expect(published.map((p) => [p.topic, p.records.length])).toEqual([
      ['hermod.sms.v1', 5000],
      ['hermod.sms.v1', 3],
    ]);
    const last = published[1]!.records[2]!;
    expect(last.key).toBe('+64210005002');
    expect(decodeJob(last.value)).toMatchObject({
      id: 'm-5002',
      channel: 'sms',
      destination: '+64210005002',
      // The submit went from the mask where there was no source: the carrier is asked with the same.
      source: 'Tāmaki',
      content: 'Kia ora — 你好 👋🏽',
      carrierIds: ['smsc:138a', 'smsc:1138a'],
    });
  });

  it('asks history again after a failure instead of giving up, and stops between pages once core stops', async () => {
    const history = historyOf([awaiting(1)], 2);
    const published: { topic: string; records: readonly BusRecord[] }[] = [];
    expect(await askCarriersAboutReceipts({ history, bus: busOf(published), log: createLogger({ test: 'receipt-queries' }), retryMs: 1 })).toBe(1);
    expect(history.asked).toBe(3);
    expect(published).toHaveLength(1);

    const stopped = historyOf([awaiting(1)]);
    expect(
      await askCarriersAboutReceipts({ history: stopped, bus: busOf([]), log: createLogger({ test: 'receipt-queries' }), retryMs: 1, stopping: () => true }),
    ).toBe(0);
    expect(stopped.asked).toBe(0);
  });

  it('says so when no message is waiting for a receipt, so an operator who read that core looks knows it is done', async () => {
    const told: string[] = [];
    const log = { ...createLogger({ test: 'receipt-queries' }), info: (msg: string) => void told.push(msg) };
    expect(await askCarriersAboutReceipts({ history: historyOf([]), bus: busOf([]), log, retryMs: 1 })).toBe(0);
    expect(told).toEqual([expect.stringContaining('nothing to ask the carriers')]);
  });
});
