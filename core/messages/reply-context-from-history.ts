import type { MessageHistory } from '../ports/message-history';
import type { ReplyContext } from '../ports/state';
import { handsetKey } from '../domain/handset-key';
import { FifoMap } from '../../lib/fifo-map';
import { replyAddressKey } from './reply-address';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The ways a number may have been written as a message's destination: `+64…`, `64…`, `0064…`. */
export function writtenForms(handset: string): string[] {
  const key = handsetKey(handset);
  if (!key.startsWith('+')) return [handset];
  const digits = key.slice(1);
  return [...new Set([key, digits, `00${digits}`, handset])];
}

/**
 * What a reply is routed by when hot state knows nothing of its handset (in-process state after a restart,
 * or a reply after the state's time to live): the messages sent to the handset in the last `days`, from
 * history. The newest is the last message to the handset; those sent from the address the handset replied
 * to give the last message from it and its senders (among what was sent to this handset). One history
 * query per handset at a time; a handset history has nothing for is not asked about again for `missMs`,
 * so replies from numbers never messaged (spam) cost one query each per that time.
 */
export function createReplyContextFromHistory(
  history: Pick<MessageHistory, 'lastSendsTo'>,
  options: { days?: number; missMs?: number; now?: () => number } = {},
) {
  const days = options.days ?? 30;
  const missMs = options.missMs ?? 10 * 60 * 1000;
  const now = options.now ?? Date.now;
  const misses = new FifoMap<string, number>();
  const asking = new Map<string, Promise<ReplyContext | undefined>>();

  const ask = async (handset: string, addressKey: string): Promise<ReplyContext | undefined> => {
    const t = now();
    const sends = await history.lastSendsTo(writtenForms(handset), t - days * DAY_MS, t);
    if (sends.length === 0) return undefined;
    const fromAddress = sends.filter((s) => replyAddressKey(s.source || s.mask) === addressKey);
    const last = (s: (typeof sends)[number] | undefined) => (s ? { messageId: s.messageId, applicationId: s.applicationId } : undefined);
    return {
      lastToHandset: last(sends[0]),
      lastFromAddress: last(fromAddress[0]),
      sendersOfAddress: [...new Set(fromAddress.map((s) => s.applicationId))],
    };
  };

  return {
    /** The context from history, or undefined when history has sent nothing to this handset lately. */
    async contextOf(handset: string, addressKey: string): Promise<ReplyContext | undefined> {
      const key = handsetKey(handset);
      const missedAt = misses.get(key);
      if (missedAt !== undefined && now() - missedAt < missMs) return undefined;
      const asked = `${key}\n${addressKey}`;
      let pending = asking.get(asked);
      if (!pending) {
        pending = ask(handset, addressKey).finally(() => asking.delete(asked));
        asking.set(asked, pending);
      }
      const context = await pending;
      if (context) misses.delete(key);
      else {
        misses.delete(key);
        if (misses.size >= 100_000) misses.shift();
        misses.set(key, now());
      }
      return context;
    },
  };
}

/**
 * What a reply is routed by: hot state's context while it knows the last message to the handset from the
 * address replied to; where it does not (in-process state after a restart, a reply past its time to live, or
 * a restart after which hot state learnt only of a later message to the handset from elsewhere, such as an
 * Intelligent Messaging message recovery handed over again), history's messages to the handset stand in for
 * that, hot state's last message to the handset kept where it knows one. Hot state's senders of the address
 * go beside history's: another application may have sent from the address since the restart, and it alone
 * must not take a reply to a message sent before it.
 */
export async function contextOfReply(known: ReplyContext, fromHistory: () => Promise<ReplyContext | undefined>): Promise<ReplyContext> {
  if (known.lastFromAddress) return known;
  const remembered = await fromHistory();
  if (!remembered) return known;
  return {
    lastToHandset: known.lastToHandset ?? remembered.lastToHandset,
    lastFromAddress: remembered.lastFromAddress,
    sendersOfAddress: [...new Set([...known.sendersOfAddress, ...remembered.sendersOfAddress])],
  };
}
