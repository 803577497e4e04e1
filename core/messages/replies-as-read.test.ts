import { describe, expect, it } from 'vitest';
import { createMemoryBus } from '../adapters/memory-bus';
import { createMemoryState } from '../adapters/memory-state';
import { topicName, type DeliveredRecord } from '../ports/bus';
import { decodeStatus } from '../ports/bus-payloads';
import type { MessageHistory, MessageRecord } from '../ports/message-history';
import { createRecentMessages } from './recent-messages';
import { markRepliedRead } from './replies-as-read';

const whatsApp = (id: string): MessageRecord =>
  ({
    id,
    numericId: 1,
    applicationId: 'acme',
    channel: 'wab',
    direction: 'MT',
    destination: '+64211234567',
    source: '',
    content: 'Kia ora — 你好 👋🏽',
    acceptedAt: 1_700_000_000_000,
    scheduledAt: 0,
  }) as unknown as MessageRecord;

describe('a WhatsApp reply taken as read', () => {
  it('marks read the message it answers once that went to WhatsApp, and not one still waiting to go (the reply answers an earlier one)', async () => {
    const bus = createMemoryBus({ partitions: 1 });
    const published: string[] = [];
    await bus.subscribe(topicName('status'), async (records: DeliveredRecord[]) => void published.push(...records.map((r) => decodeStatus(r.value).id)), {
      group: 'test',
    });
    const state = createMemoryState();
    const recent = createRecentMessages();
    recent.put([whatsApp('sent-one'), whatsApp('waiting-one')]);
    await state.advanceStatuses([
      { id: 'sent-one', status: 'accepted', at: 1 },
      { id: 'sent-one', status: 'queued', at: 2 },
      { id: 'sent-one', status: 'sent', at: 3 },
      { id: 'waiting-one', status: 'accepted', at: 1 },
      { id: 'waiting-one', status: 'queued', at: 2 },
    ]);
    const history = { getMessage: async () => undefined } as unknown as MessageHistory;
    const reply = (replyTo: string) => ({ channel: 'wab', applicationId: 'acme', replyTo, acceptedAt: 1_700_000_001_000 });
    expect(await markRepliedRead({ bus, history, recent, state }, [reply('sent-one'), reply('waiting-one')])).toBe(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(published).toEqual(['sent-one']);
  });
});
