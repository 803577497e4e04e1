import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../adapters/memory-bus';
import { createMemoryState } from '../adapters/memory-state';
import { topicName, type Subscription } from '../ports/bus';
import { encodeStatus } from '../ports/bus-payloads';
import type { MessageHistory } from '../ports/message-history';
import type { StatusChange, StatusRecorder } from './status-recorder';
import { startStatusConsumer } from './status-consumer';
import { eventually } from '../../test/support/eventually';
import { createLogger } from '../../lib/log';

describe('status consumer', () => {
  let subscription: Subscription | undefined;
  afterEach(async () => subscription?.close());

  it('matches a thousand receipts known only by carrier id, which hot state lost in a restart, with one history query', async () => {
    const bus = createMemoryBus({ partitions: 8 });
    const state = createMemoryState();
    // Hot state still knows one of them; history knows the rest.
    await state.putCarrierIds([{ carrierId: 'carrier-0', messageId: 'message-0' }]);
    const queries: string[][] = [];
    const history = {
      async findMessageIdsByCarrierIds(carrierIds: readonly string[]) {
        queries.push([...carrierIds]);
        return new Map(carrierIds.map((c) => [c, c.replace('carrier', 'message')]));
      },
    } as unknown as MessageHistory;
    const recorded: StatusChange[] = [];
    const recorder = { record: async (changes: readonly StatusChange[]) => (recorded.push(...changes), changes.map(() => true)) } as unknown as StatusRecorder;
    subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }) });

    await bus.publish(
      topicName('status'),
      Array.from({ length: 1000 }, (_, i) => ({
        key: `carrier-${i}`,
        value: encodeStatus({ id: '', carrierId: `carrier-${i}`, status: 'received', at: 1_700_000_000_000 + i, channel: 'sms', detail: 'Kāore he raru' }),
      })),
    );

    await eventually(() => recorded.length === 1000);
    expect(recorded.map((c) => c.messageId).sort()).toEqual(Array.from({ length: 1000 }, (_, i) => `message-${i}`).sort());
    expect(queries.flat().sort()).toEqual(Array.from({ length: 999 }, (_, i) => `carrier-${i + 1}`).sort());
    // One query per batch the bus hands over (one per partition here, at most), never one per receipt.
    expect(queries.length).toBeLessThanOrEqual(8);
  });
});
