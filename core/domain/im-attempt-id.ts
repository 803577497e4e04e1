import { isCampaignMessageId } from './campaign-message-id';

/**
 * Recognising an Intelligent Messaging delivery attempt by its id (the layout
 * is described in core/im/im-ids.ts: the IM message's UUID with version 8 and
 * last digit k+1): the SMS interfaces read SMS messages only, so they must
 * not hand out an attempt, which is the IM message's own business.
 */
export function isImAttemptId(id: string): boolean {
  return id.length === 36 && id[14] === '8' && id[35] !== '0' && !isCampaignMessageId(id);
}
