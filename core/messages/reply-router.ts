import type { LastMessage, ReplyContext } from '../ports/state';

/**
 * Which rule chose the application of a reply, stored on the MO record and
 * logged, from the most to the least certain:
 * - `quoted-message`: the reply quotes a message hermod sent the handset
 *   (WhatsApp's `context`: the handset swiped to reply to it, or tapped one
 *   of its buttons): that message's application, whoever messaged since;
 * - `claimed-address`: an operator claimed the address the handset replied to
 *   for the application (`hermod apps set-sources`), unless the last message
 *   to the handset from that address was another application's (a shared
 *   WhatsApp number, a send before the claim): the reply answers that one
 *   (`last-message-from-address`). Intake refuses other applications' sends
 *   from a claimed address;
 * - `only-sender-from-address`: one application, and no other, sends from it;
 * - `last-message-from-address`: several send from it (a shared short code):
 *   the one that last messaged this handset from it;
 * - `last-message-to-handset`: no application is known to use the address
 *   (the carrier's default number, a mask a handset cannot answer): the one
 *   that last messaged the handset at all. Not for WhatsApp: every WhatsApp
 *   message hermod sends is remembered by the business number it went from,
 *   so a number no application is known to use is another business's;
 * - `unmatched`: none of these; the reply is stored without an application.
 * A START may go elsewhere than these say: `opted-out-from-address` (start-route.ts).
 */
export type ReplyRule =
  | 'quoted-message'
  | 'claimed-address'
  | 'only-sender-from-address'
  | 'last-message-from-address'
  | 'last-message-to-handset'
  | 'unmatched'
  /** A START to an address, given to an application sending from it that the handset is opted out of (start-route.ts). */
  | 'opted-out-from-address';

export interface ReplyRoute {
  applicationId: string;
  /** The outgoing message the reply answers, when one is known for that application. */
  replyTo: string;
  rule: ReplyRule;
}

/**
 * Routes one reply from the message it quotes, if any (quoted-messages.ts), else from what hot state knows about the
 * handset and the address, and the address's claimant. `byHandset` false (a WhatsApp reply) leaves out
 * `last-message-to-handset`.
 */
export function routeReply(context: ReplyContext, claimedBy: string | undefined, quoted?: LastMessage, byHandset = true): ReplyRoute {
  if (quoted) return { applicationId: quoted.applicationId, replyTo: quoted.messageId, rule: 'quoted-message' };
  const { lastFromAddress, lastToHandset, sendersOfAddress } = context;
  const answered = (applicationId: string): string =>
    [lastFromAddress, lastToHandset].find((m): m is LastMessage => m?.applicationId === applicationId)?.messageId ?? '';
  if (claimedBy) {
    if (!lastFromAddress || lastFromAddress.applicationId === claimedBy)
      return { applicationId: claimedBy, replyTo: answered(claimedBy), rule: 'claimed-address' };
    return { applicationId: lastFromAddress.applicationId, replyTo: lastFromAddress.messageId, rule: 'last-message-from-address' };
  }
  if (sendersOfAddress.length === 1) {
    const only = sendersOfAddress[0]!;
    return { applicationId: only, replyTo: lastFromAddress?.applicationId === only ? lastFromAddress.messageId : '', rule: 'only-sender-from-address' };
  }
  if (lastFromAddress) return { applicationId: lastFromAddress.applicationId, replyTo: lastFromAddress.messageId, rule: 'last-message-from-address' };
  // A known address whose senders never messaged this handset from it: guessing would hand the reply to a stranger.
  if (byHandset && sendersOfAddress.length === 0 && lastToHandset)
    return { applicationId: lastToHandset.applicationId, replyTo: lastToHandset.messageId, rule: 'last-message-to-handset' };
  return { applicationId: '', replyTo: '', rule: 'unmatched' };
}
