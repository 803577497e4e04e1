import { describe, expect, it } from 'vitest';
import { createMemoryState } from '../adapters/memory-state';
import type { MessageHistory, MessageRecord } from '../ports/message-history';
import { message } from '../adapters/history-contract';
import { createRecentMessages } from './recent-messages';
import { quotedMessages } from './quoted-messages';

/** A WhatsApp reply written to the business number the messages below were sent from. */
const toBusiness = { channel: 'wab', destination: '+15550000001', businessId: '100000000000001' };

const sent = (id: string, applicationId: string, destination: string, direction: 'MT' | 'MO' = 'MT'): MessageRecord =>
  // WhatsApp attempts are kept as sent from the business number's phone number id (HERMOD_WAB_SENDER).
  message({ id, applicationId, destination, direction, channel: 'wab', source: '100000000000001', via: 'im_v1' });

describe('the message a reply quotes', () => {
  it('is found by its wamid in hot state, or in history once hot state forgot it, with the application that sent it', async () => {
    const state = createMemoryState();
    const recent = createRecentMessages();
    recent.put([sent('m-acme', 'acme', '+64211234561')]);
    await state.putCarrierIds([{ carrierId: 'wamid.ACME', messageId: 'm-acme' }]);
    const asked: string[][] = [];
    const history = {
      findMessageIdsByCarrierIds: async (refs: readonly string[]) => {
        asked.push([...refs]);
        return new Map(refs.filter((r) => r === 'wamid.OLD').map((r) => [r, 'm-old']));
      },
      findMessages: async (ids: readonly string[]) => (ids.includes('m-old') ? [sent('m-old', 'globex', '64211234561')] : []),
    } as unknown as MessageHistory;

    const found = await quotedMessages({ state, history, recent }, [
      { ...toBusiness, source: '+64211234561', quotedRef: 'wamid.ACME' },
      { ...toBusiness, source: '+64211234561' },
      { ...toBusiness, source: '+64211234561', quotedRef: 'wamid.OLD' },
      { ...toBusiness, source: '+64211234561', quotedRef: 'wamid.NOBODY' },
    ]);

    expect([...found]).toEqual([
      [0, { messageId: 'm-acme', applicationId: 'acme' }],
      // Written without its plus when it was sent: the same handset.
      [2, { messageId: 'm-old', applicationId: 'globex' }],
    ]);
    expect(asked).toEqual([['wamid.OLD', 'wamid.NOBODY']]);
  });

  it("routes nothing by a message sent to another handset, or by a reply (someone's quoted reference is not an address)", async () => {
    const state = createMemoryState();
    const recent = createRecentMessages();
    recent.put([sent('m-other', 'acme', '+64219999999'), sent('m-reply', 'acme', '+15550000001', 'MO')]);
    await state.putCarrierIds([
      { carrierId: 'wamid.OTHER', messageId: 'm-other' },
      { carrierId: 'wamid.REPLY', messageId: 'm-reply' },
    ]);
    const history = { findMessageIdsByCarrierIds: async () => new Map(), findMessages: async () => [] } as unknown as MessageHistory;

    const found = await quotedMessages({ state, history, recent }, [
      { ...toBusiness, source: '+64211234561', quotedRef: 'wamid.OTHER' },
      { ...toBusiness, source: '+64211234561', quotedRef: 'wamid.REPLY' },
    ]);
    expect(found.size).toBe(0);
  });

  it('routes nothing by a quote carried to another business number or another channel (a modified client)', async () => {
    const state = createMemoryState();
    const recent = createRecentMessages();
    recent.put([sent('m-acme', 'acme', '+64211234561')]);
    await state.putCarrierIds([{ carrierId: 'wamid.ACME', messageId: 'm-acme' }]);
    const history = { findMessageIdsByCarrierIds: async () => new Map(), findMessages: async () => [] } as unknown as MessageHistory;

    const found = await quotedMessages({ state, history, recent }, [
      { channel: 'wab', destination: '+15550000002', businessId: '100000000000002', source: '+64211234561', quotedRef: 'wamid.ACME' },
      { channel: 'rcs', destination: '+15550000001', source: '+64211234561', quotedRef: 'wamid.ACME' },
      // Without the phone number id it was written to, nothing says it is the number the message came from.
      { ...toBusiness, businessId: '', source: '+64211234561', quotedRef: 'wamid.ACME' },
      { ...toBusiness, source: '+64211234561', quotedRef: 'wamid.ACME' },
    ]);
    expect([...found.keys()]).toEqual([3]);
  });

  it('asks history nothing when no reply quotes a message', async () => {
    const history = {} as MessageHistory;
    const found = await quotedMessages({ state: createMemoryState(), history, recent: createRecentMessages() }, [
      { ...toBusiness, source: '+64211234561', quotedRef: '' },
    ]);
    expect(found.size).toBe(0);
  });
});
