import type { CampaignControlState, HotState } from '../ports/state';

type CampaignControl = Pick<HotState, 'setCampaignControl' | 'campaignControls' | 'parkCampaignMessages'>;

/**
 * Campaign controls of the in-memory hot state. Every call runs synchronously
 * inside its promise, so a park and a resume in this process never
 * interleave: a message is either parked before the resume (and handed back
 * by it) or sees the campaign running. Core restores the controls from
 * history at start; parked messages are still `queued` in history, so
 * recovery hands them to the workers again, which park them again.
 */
export function createMemoryCampaignControl(open: () => void): CampaignControl {
  const controls = new Map<number, CampaignControlState>();
  const parked = new Map<number, Set<string>>();
  return {
    async setCampaignControl(campaignId, control) {
      open();
      controls.set(campaignId, control);
      if (control === 'paused') return [];
      const ids = [...(parked.get(campaignId) ?? [])];
      parked.delete(campaignId);
      return ids;
    },
    async campaignControls(campaignIds) {
      open();
      return campaignIds.map((id) => controls.get(id) ?? 'running');
    },
    async parkCampaignMessages(campaignId, messageIds) {
      open();
      const control = controls.get(campaignId) ?? 'running';
      if (control !== 'paused') return control;
      const set = parked.get(campaignId) ?? new Set<string>();
      for (const id of messageIds) set.add(id);
      parked.set(campaignId, set);
      return control;
    },
  };
}
