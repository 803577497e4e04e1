import type { CampaignRecord, MemberRow } from '../ports/campaign-store';
import type { MessageRecord } from '../ports/message-history';
import { countSegments } from '../messages/segments';
import { campaignMessageId, campaignMessageNumericId } from './campaign-message-ids';

/**
 * The message of one campaign member: the same id, numeric id and text
 * whenever it is built (a first fan-out, a fan-out handed out again, or a
 * resume re-sending what workers parked during a pause).
 */
export function campaignMessageRecord(c: CampaignRecord, m: MemberRow, content: string, at: number): MessageRecord {
  return {
    id: campaignMessageId(c.id, m.position),
    numericId: campaignMessageNumericId(c.numericBase, m.position),
    applicationId: c.applicationId,
    channel: 'sms',
    direction: 'MT',
    destination: m.destination,
    source: c.mask,
    content,
    reference: '',
    messageClass: 'mt_message',
    mask: c.mask,
    smsClass: 0,
    scheduledAt: 0,
    integrationId: '',
    via: 'campaign',
    segments: countSegments(content),
    acceptedAt: at,
    replyTo: '',
  };
}
