import type { CampaignRecord, CampaignStore } from '../ports/campaign-store';
import type { MessageRecord } from '../ports/message-history';
import { OPT_OUT_CONFIRMATION, type MessageIntake, type NewMessage } from '../messages/message-intake';
import { keywordOf } from '../messages/reply-keywords';
import type { Logger } from '../../lib/log';
import { campaignOfMessage } from './campaign-message-ids';
import { FifoMap } from '../../lib/fifo-map';

/**
 * Answers replies to campaign messages: a STOP-style reply gets the campaign's
 * `opt_out_response` (the handset is opted out by the inbound consumer), any
 * other reply its `reply_response`. Sent from the campaign's mask.
 */
export function createCampaignResponder(deps: { store: CampaignStore; intake: MessageIntake; log: Logger }) {
  const cache = new FifoMap<number, { campaign: CampaignRecord | undefined; at: number }>();
  const campaignOf = async (id: number): Promise<CampaignRecord | undefined> => {
    const hit = cache.get(id);
    if (hit && Date.now() - hit.at < 60_000) return hit.campaign;
    const campaign = await deps.store.findCampaign(id);
    cache.set(id, { campaign, at: Date.now() });
    if (cache.size > 1000) cache.shift();
    return campaign;
  };

  return async function respond(replies: readonly MessageRecord[]): Promise<void> {
    const answers: NewMessage[] = [];
    for (const r of replies) {
      const campaignId = campaignOfMessage(r.replyTo);
      if (!campaignId) continue;
      const c = await campaignOf(campaignId);
      if (!c || c.applicationId !== r.applicationId) continue;
      const keyword = keywordOf(r.content);
      const content = keyword === 'stop' ? c.optOutResponse : keyword === undefined ? c.replyResponse : '';
      if (!content) continue;
      answers.push({
        applicationId: c.applicationId,
        channel: r.channel,
        destination: r.source,
        content,
        source: c.mask,
        reference: '',
        messageClass: 'mt_message',
        mask: c.mask,
        smsClass: 0,
        scheduledAt: 0,
        integrationId: '',
        via: keyword === 'stop' ? OPT_OUT_CONFIRMATION : 'campaign_reply_response',
      });
    }
    if (answers.length === 0) return;
    const results = await deps.intake.accept(answers);
    for (const res of results) if (!res.ok) deps.log.warn('could not answer a reply to a campaign', { err: res.error });
  };
}
