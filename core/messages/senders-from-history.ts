import type { MessageHistory } from '../ports/message-history';
import type { HotState } from '../ports/state';
import { replyAddressKey } from './reply-address';

/** In-process hot state remembers an address's senders this long (memory-state.ts's time to live). */
const IN_PROCESS_SENDERS_MS = 24 * 60 * 60 * 1000;

/**
 * In-process hot state starts empty: which applications sent from which
 * address in its time to live is learnt again from history, so that after a
 * restart a reply to an application's own number from a handset it never
 * messaged is still that application's (`only-sender-from-address`), STOP
 * included. Redis keeps them across restarts and needs none of this.
 * Resolves with how many addresses were learnt.
 */
export async function rememberSendersFromHistory(deps: {
  history: Pick<MessageHistory, 'sendersSince'>;
  state: Pick<HotState, 'rememberSenders'>;
  now?: number;
}): Promise<number> {
  const sends = await deps.history.sendersSince((deps.now ?? Date.now()) - IN_PROCESS_SENDERS_MS);
  // As intake names the address a reply would answer (message-intake.ts rememberRecipients): the source, else the mask.
  const entries = sends.map((s) => ({ address: replyAddressKey(s.source || s.mask), applicationId: s.applicationId, at: s.at }));
  await deps.state.rememberSenders(entries);
  return new Set(entries.map((e) => e.address)).size;
}
