import type { Bus } from '../ports/bus';
import { topicName } from '../ports/bus';
import { publishInParts } from '../ports/publish-in-parts';
import { encodeStatus } from '../ports/bus-payloads';
import type { MessageHistory, MessageRecord } from '../ports/message-history';
import type { RecentMessages } from './recent-messages';
import type { HotState } from '../ports/state';
import { stageOf } from '../domain/message-status';

const SENT_STAGE = stageOf('sent');

/** Channels where the handset answers in the same conversation it was written to, so a reply proves the message was read. */
const CONVERSATION_CHANNELS = new Set(['wab']);

/**
 * A WhatsApp reply answers the WhatsApp message before it in the chat, so
 * that message was read even when the handset sends no read receipt (they
 * can be turned off): each such reply becomes a `read` for the message it
 * answers, on the status topic like a carrier's report. An Intelligent
 * Messaging attempt waiting for `read` then succeeds, as it would on the
 * receipt. A reply to a message of another channel (an SMS) changes nothing.
 */
export async function markRepliedRead(
  deps: { bus: Bus; history: MessageHistory; recent: RecentMessages; state: Pick<HotState, 'getStatus'> },
  replies: readonly Pick<MessageRecord, 'channel' | 'applicationId' | 'replyTo' | 'acceptedAt'>[],
): Promise<number> {
  const answered = await Promise.all(
    replies
      .filter((r) => CONVERSATION_CHANNELS.has(r.channel) && r.applicationId && r.replyTo)
      .map(async (r) => {
        const m = deps.recent.get(r.replyTo) ?? (await deps.history.getMessage(r.applicationId, r.replyTo));
        return m && m.direction === 'MT' && m.channel === r.channel ? { id: m.id, channel: m.channel, at: r.acceptedAt } : undefined;
      }),
  );
  const found = answered.filter((a) => a !== undefined);
  // One still waiting to go to WhatsApp (hot state has it before `sent`) is not what the handset answered: the reply
  // came in the moment between its routing and its hand-over, and answers an earlier message. Read, it would end its
  // attempt, fallback and all, before it was sent. (Unknown to hot state, after a loss: taken as answered.)
  const statuses = await Promise.all(found.map((a) => deps.state.getStatus(a.id)));
  const read = found.filter((_, i) => {
    const status = statuses[i]?.status;
    return status === undefined || stageOf(status) >= SENT_STAGE;
  });
  if (read.length === 0) return 0;
  await publishInParts(
    deps.bus,
    topicName('status'),
    read.map((a) => ({
      key: a.id,
      value: encodeStatus({ id: a.id, carrierId: '', status: 'read', at: a.at, errorCode: '', detail: 'the handset replied', channel: a.channel }),
    })),
  );
  return read.length;
}
