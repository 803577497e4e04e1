import type { CampaignRecord, CampaignStore } from '../ports/campaign-store';
import type { MessageHistory, MessageRecord } from '../ports/message-history';
import { OPT_OUT_CONFIRMATION, type MessageIntake, type NewMessage } from '../messages/message-intake';
import type { RecentMessages } from '../messages/recent-messages';
import { keywordOf } from '../messages/reply-keywords';
import type { Logger } from '../../lib/log';
import { campaignOfMessage } from './campaign-message-ids';
import { FifoMap } from '../../lib/fifo-map';

/** `via` of a campaign's answer to a reply that is no STOP. */
const REPLY_RESPONSE = 'campaign_reply_response';

/**
 * Answers replies to campaign messages: a STOP-style reply gets the campaign's
 * `opt_out_response` (the handset is opted out by the inbound consumer), any
 * other reply its `reply_response`. Sent from the campaign's mask, each answer
 * names the campaign message it answers for (`replyTo`): a handset that asked
 * a question first and sends STOP after the answer is answering that answer,
 * the last message it had from the mask, and still gets the campaign's
 * `opt_out_response`; any other reply to an answer gets no answer again.
 */
export function createCampaignResponder(deps: {
  store: CampaignStore;
  intake: MessageIntake;
  recent: Pick<RecentMessages, 'get'>;
  history: Pick<MessageHistory, 'getMessage'>;
  log: Logger;
}) {
  const cache = new FifoMap<number, { campaign: CampaignRecord | undefined; at: number }>();
  const campaignOf = async (id: number): Promise<CampaignRecord | undefined> => {
    const hit = cache.get(id);
    if (hit && Date.now() - hit.at < 60_000) return hit.campaign;
    const campaign = await deps.store.findCampaign(id);
    cache.set(id, { campaign, at: Date.now() });
    if (cache.size > 1000) cache.shift();
    return campaign;
  };

  /**
   * The campaign message a reply is about: the one it answers; for a STOP, also the one the campaign's answer
   * it answers was for. Any other reply to an answer gets none (one answer a conversation: two auto-responders
   * answering each other would never stop), and needs no lookup.
   */
  const campaignMessageOf = async (reply: MessageRecord): Promise<string | undefined> => {
    if (!reply.replyTo) return undefined;
    if (campaignOfMessage(reply.replyTo)) return reply.replyTo;
    if (keywordOf(reply.content) !== 'stop') return undefined;
    const answered =
      deps.recent.get(reply.replyTo) ??
      (await deps.history.getMessage(reply.applicationId, reply.replyTo).catch((err: unknown) => {
        deps.log.warn('could not read the message a reply answers; it gets no campaign answer', { err, id: reply.id });
        return undefined;
      }));
    if (!answered || answered.applicationId !== reply.applicationId) return undefined;
    if (answered.via !== REPLY_RESPONSE && answered.via !== OPT_OUT_CONFIRMATION) return undefined;
    return campaignOfMessage(answered.replyTo) ? answered.replyTo : undefined;
  };

  return async function respond(replies: readonly MessageRecord[]): Promise<void> {
    const answers: NewMessage[] = [];
    // Side by side: a STOP to an answer no longer in memory reads history.
    const about = await Promise.all(replies.map(campaignMessageOf));
    for (const [i, r] of replies.entries()) {
      const campaignMessage = about[i];
      const campaignId = campaignMessage ? campaignOfMessage(campaignMessage) : undefined;
      if (!campaignMessage || !campaignId) continue;
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
        via: keyword === 'stop' ? OPT_OUT_CONFIRMATION : REPLY_RESPONSE,
        replyTo: campaignMessage,
      });
    }
    if (answers.length === 0) return;
    const results = await deps.intake.accept(answers);
    for (const res of results) if (!res.ok) deps.log.warn('could not answer a reply to a campaign', { err: res.error });
  };
}
