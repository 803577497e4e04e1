import { isImAttemptId, parseImAttemptId } from '../im/im-ids';

/**
 * The id the client knows the message a reply answers by, as its reply callback's `reply_to` gives it: an IM
 * delivery attempt's IM message, the integer of a Gateway v1 or campaign message (`knownAs`, by UUID), else the
 * UUID; undefined for a reply that answers none.
 */
export function clientReplyTo(replyTo: string, knownAs: ReadonlyMap<string, number>): string | number | undefined {
  if (!replyTo) return undefined;
  const answered = isImAttemptId(replyTo) ? parseImAttemptId(replyTo).messageId : replyTo;
  return knownAs.get(answered) ?? answered;
}
