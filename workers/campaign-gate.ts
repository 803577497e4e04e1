import { campaignOfMessage } from '../core/domain/campaign-message-id';
import type { CampaignControlState, HotState } from '../core/ports/state';
import { FifoMap } from '../lib/fifo-map';

/** What a worker does with a job right before the carrier: send it, leave it parked (paused campaign), or end it (cancelled campaign). */
export type CampaignVerdict = 'send' | 'parked' | 'cancelled';

interface Cached {
  at: number;
  /** The last answer (running until the first read comes back). */
  control: CampaignControlState;
  reading?: Promise<CampaignControlState>;
}

/**
 * The operators' pause and cancel as a worker sees them. A campaign's control
 * is read from hot state at most every `ttlMs` (a pause reaches every worker
 * well within a second, at one read per campaign and period, not per
 * message). `verdict` decides before a hand-over: a job of a campaign that
 * looks paused or cancelled is parked atomically with a fresh check, so a
 * resume never misses it. `looksHeld` answers at once from what was last
 * read, for a carrier's queue to withdraw a message right before it leaves.
 */
export function createCampaignGate(state: HotState, ttlMs = 200) {
  const cache = new FifoMap<number, Cached>();
  const refresh = (campaignId: number, entry: Cached): Promise<CampaignControlState> => {
    entry.at = Date.now();
    const reading = state.campaignControls([campaignId]).then(
      ([c]) => (entry.control = c ?? 'running'),
      () => entry.control, // hot state unreachable: the last word stands, and the atomic park decides
    );
    entry.reading = reading;
    void reading.finally(() => {
      if (entry.reading === reading) entry.reading = undefined;
    });
    return reading;
  };
  const entryOf = (campaignId: number): Cached => {
    let entry = cache.get(campaignId);
    if (!entry) {
      entry = { at: 0, control: 'running' };
      cache.set(campaignId, entry);
      if (cache.size > 1000) cache.shift();
    }
    if (!entry.reading && Date.now() - entry.at >= ttlMs) void refresh(campaignId, entry);
    return entry;
  };
  return {
    async verdict(messageId: string): Promise<CampaignVerdict> {
      const campaignId = campaignOfMessage(messageId);
      if (!campaignId) return 'send';
      const entry = entryOf(campaignId);
      const control = entry.reading ? await entry.reading : entry.control;
      if (control === 'running') return 'send';
      const now = await state.parkCampaignMessages(campaignId, [messageId]);
      entry.control = now;
      return now === 'paused' ? 'parked' : now === 'cancelled' ? 'cancelled' : 'send';
    },
    /**
     * The verdict without waiting, where it needs no read and no park: `send` for a message of no campaign, or of one
     * last read as running with no read under way; undefined otherwise (ask `verdict`).
     */
    verdictNow(messageId: string): 'send' | undefined {
      const campaignId = campaignOfMessage(messageId);
      if (!campaignId) return 'send';
      const entry = entryOf(campaignId);
      return !entry.reading && entry.control === 'running' ? 'send' : undefined;
    },
    looksHeld(messageId: string): boolean {
      const campaignId = campaignOfMessage(messageId);
      return campaignId !== 0 && entryOf(campaignId).control !== 'running';
    },
  };
}
