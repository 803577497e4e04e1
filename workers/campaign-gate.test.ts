import { describe, expect, it } from 'vitest';
import { createMemoryState } from '../core/adapters/memory-state';
import { campaignMessageId } from '../core/campaigns/campaign-message-ids';
import { createCampaignGate } from './campaign-gate';

describe('a worker’s campaign gate', () => {
  it('lets a message of no campaign, and one of a campaign last read as running, go without waiting', async () => {
    const state = createMemoryState();
    const gate = createCampaignGate(state, 60_000);
    expect(gate.verdictNow('0a1b2c3d4e5f60718293a4b5c6d7e8f9')).toBe('send');
    const id = campaignMessageId(7, 1);
    // The first look reads hot state: until it answers, the gate cannot say at once.
    expect(gate.verdictNow(id)).toBeUndefined();
    expect(await gate.verdict(id)).toBe('send');
    expect(gate.verdictNow(campaignMessageId(7, 2))).toBe('send');
  });

  it('does not answer at once for a campaign paused since its last read: the worker asks, and the message is parked', async () => {
    const state = createMemoryState();
    const gate = createCampaignGate(state, 0);
    expect(await gate.verdict(campaignMessageId(8, 1))).toBe('send');
    await state.setCampaignControl(8, 'paused');
    const id = campaignMessageId(8, 2);
    expect(gate.verdictNow(id)).toBeUndefined();
    expect(await gate.verdict(id)).toBe('parked');
    expect(gate.verdictNow(campaignMessageId(8, 3))).toBeUndefined();
  });
});
