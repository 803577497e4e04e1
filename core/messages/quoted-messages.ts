import type { MessageHistory } from '../ports/message-history';
import type { HotState, LastMessage } from '../ports/state';
import { handsetKey } from '../domain/handset-key';
import type { RecentMessages } from './recent-messages';
import { replyAddressKey } from './reply-address';

/** A reply: who sent it, on which channel, to which business address, and the carrier's id of the message it quotes (WhatsApp's `context.id`). */
export interface QuotingReply {
  source: string;
  channel: string;
  destination: string;
  businessId?: string;
  quotedRef?: string;
}

/**
 * The message each reply quotes, where one is known: its carrier id found in
 * hot state, else in history (one query for the batch), and its application
 * in memory, else in history. Only a message hermod sent to the handset that
 * quotes it, on the reply's channel, from the address the reply was written
 * to (where the message names one), counts: a reference to someone else's
 * message, or a quote carried to another business number by a modified
 * client, routes nothing.
 * Replies that quote nothing known are left out of the answer (index → message).
 */
export async function quotedMessages(
  deps: { state: HotState; history: MessageHistory; recent: Pick<RecentMessages, 'get'> },
  replies: readonly QuotingReply[],
): Promise<Map<number, LastMessage>> {
  const found = new Map<number, LastMessage>();
  const asked = replies.flatMap((r, i) => (r.quotedRef ? [i] : []));
  if (asked.length === 0) return found;
  const ids = new Map<string, string>();
  await Promise.all(
    [...new Set(asked.map((i) => replies[i]!.quotedRef!))].map(async (ref) => {
      const id = await deps.state.getMessageIdByCarrierId(ref);
      if (id) ids.set(ref, id);
    }),
  );
  const unknownRefs = [...new Set(asked.map((i) => replies[i]!.quotedRef!).filter((ref) => !ids.has(ref)))];
  if (unknownRefs.length > 0) for (const [ref, id] of await deps.history.findMessageIdsByCarrierIds(unknownRefs)) ids.set(ref, id);

  const messages = new Map<string, { applicationId: string; destination: string; direction: string; channel: string; source: string }>();
  const notInMemory: string[] = [];
  for (const id of new Set(ids.values())) {
    const m = deps.recent.get(id);
    if (m) messages.set(id, m);
    else notInMemory.push(id);
  }
  if (notInMemory.length > 0) for (const m of await deps.history.findMessages(notInMemory)) messages.set(m.id, m);

  for (const i of asked) {
    const r = replies[i]!;
    const id = ids.get(r.quotedRef!);
    const m = id === undefined ? undefined : messages.get(id);
    if (id === undefined || !m?.applicationId || m.direction !== 'MT' || m.channel !== r.channel || handsetKey(m.destination) !== handsetKey(r.source))
      continue;
    const writtenTo = [r.destination, r.businessId ?? ''].filter(Boolean).map(replyAddressKey);
    if (m.source && !writtenTo.includes(replyAddressKey(m.source))) continue;
    found.set(i, { messageId: id, applicationId: m.applicationId });
  }
  return found;
}
