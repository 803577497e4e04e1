import type { JourneyEvent } from '../../proto/gen/hermod/v1/operations';
import { imAttemptId } from '../im/im-ids';
import type { ImPlan } from '../im/im-plan';
import type { MessageHistory, StoredMessage } from '../ports/message-history';
import { IM_SETTLED } from '../ports/im-store';
import { inJourneyOrder } from './journey-order';

/**
 * The journey of an Intelligent Messaging message: its own events (attempt
 * 0, channel `im`), and each of its attempts, a message of its own (its id
 * derived from the message's), whose events are shown on its channel,
 * numbered from 1 as the IM status callbacks number them. An attempt's events
 * stay together, in their order, where the attempt began (its `accepted`,
 * hermod's own clock): a carrier's report may carry a time in whole seconds,
 * before the attempt began; within an attempt, such a report follows the
 * stages hermod recorded earlier in its second (journey-order.ts). `attempts` is how many were started. hermod's
 * mark that the message is settled (im-store.ts) is left out.
 */
export async function imJourney(
  history: Pick<MessageHistory, 'listEvents'>,
  message: Pick<StoredMessage, 'id' | 'content'>,
  own: readonly JourneyEvent[],
): Promise<{ attempts: number; events: JourneyEvent[] }> {
  let planned: ImPlan['attempts'] = [];
  try {
    const plan = JSON.parse(message.content) as Partial<ImPlan>;
    if (Array.isArray(plan.attempts)) planned = plan.attempts;
  } catch {
    // Not a plan (it always is for an IM message): its own events alone.
  }
  const lists = await Promise.all(planned.map(async (_, k) => inJourneyOrder(await history.listEvents(imAttemptId(message.id, k)))));
  // The mark that the message is settled repeats its status for hermod's own bookkeeping: not an event of its journey.
  const blocks: { at: number; events: JourneyEvent[] }[] = own.filter((e) => e.detail !== IM_SETTLED).map((e) => ({ at: e.at!.getTime(), events: [e] }));
  lists.forEach((list, k) => {
    if (list.length === 0) return;
    const began = (list.find((e) => e.status === 'accepted') ?? list[0]!).at;
    const events = list.map((e) => ({
      status: e.status,
      at: new Date(e.at),
      channel: planned[k]!.channel,
      carrierId: e.carrierId,
      errorCode: e.errorCode,
      detail: e.detail,
      attempt: k + 1,
    }));
    blocks.push({ at: began, events });
  });
  // Stable: the message's own events keep their order where times tie.
  blocks.sort((a, b) => a.at - b.at);
  return { attempts: lists.filter((l) => l.length > 0).length, events: blocks.flatMap((b) => b.events) };
}
