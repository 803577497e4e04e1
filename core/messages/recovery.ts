import type { MessageHistory, StoredMessage } from '../ports/message-history';
import type { HotState } from '../ports/state';
import type { MessageIntake } from './message-intake';
import type { RecentMessages } from './recent-messages';
import type { StatusChange } from './status-recorder';
import type { Logger } from '../../lib/log';

/**
 * After a start (once core listens, for messages accepted before the start),
 * every stored message that the carrier has not yet confirmed
 * is handed to its channel again (or back to the scheduler if its time is still to come), so nothing accepted before a crash is lost.
 * A worker skips a message whose status shows it already went out, so the
 * only duplicates are the ones in flight at the moment of the crash.
 * They are in flight again, so the API ones go among the recent messages, as
 * at their acceptance: otherwise each of their status changes would cost a
 * history lookup to make its callback (thousands of them, one at a time in
 * the engine, held up the start by tens of seconds). Campaign messages stay
 * out, as at their acceptance.
 *
 * A message still at `accepted` may have been stored by a process that died
 * before it told that status (its callback made): it is told again, before
 * anything that follows it. Where it had been told, its client gets the same
 * callback twice, with the same event id (callback-producer.ts).
 */
const PAGE = 5000;

export async function recoverUnfinished(deps: {
  history: MessageHistory;
  state: HotState;
  intake: MessageIntake;
  recent: Pick<RecentMessages, 'put'>;
  tellAccepted?: (changes: readonly StatusChange[]) => void;
  log: Logger;
  /** Only messages accepted before then (ms): core takes new ones while it recovers, and hands those over itself. */
  acceptedBefore?: number;
  /** Set once core stops: recovery ends between pages (what is left is for the next start). */
  stopping?: () => boolean;
  /** Without it, a page history fails to give fails the recovery; with it, the page is asked for again after that long. */
  retryMs?: number;
}): Promise<number> {
  let after: { acceptedAt: number; id: string } | undefined;
  let total = 0;
  let cut = false;
  for (;;) {
    if (deps.stopping?.()) {
      cut = true;
      break;
    }
    let page: StoredMessage[];
    try {
      page = await deps.history.listUnfinished(PAGE, after, deps.acceptedBefore);
      await deps.state.advanceStatuses(page.map((m) => ({ id: m.id, status: m.status, at: m.statusAt })));
    } catch (err) {
      if (deps.retryMs === undefined) throw err;
      deps.log.warn('recovering unfinished messages failed; will retry', { err, recovered: total });
      await new Promise((resolve) => setTimeout(resolve, deps.retryMs));
      continue;
    }
    if (page.length === 0) break;
    deps.recent.put(page.filter((m) => m.via !== 'campaign'));
    deps.tellAccepted?.(
      page
        .filter((m) => m.status === 'accepted')
        .map((m) => ({ messageId: m.id, applicationId: m.applicationId, channel: m.channel, status: 'accepted' as const, at: m.statusAt })),
    );
    // A campaign's messages not yet with a carrier are screened again: one may have been parked by a pause whose resume
    // a stop cut short (its STOP or block came meanwhile), and a start may come long after the crash.
    const screened: StoredMessage[] = [];
    const rest: StoredMessage[] = [];
    for (const m of page) (m.via === 'campaign' && (m.status === 'accepted' || m.status === 'queued') ? screened : rest).push(m);
    if (rest.length > 0) await deps.intake.dispatch(rest);
    if (screened.length > 0) await deps.intake.dispatchHeld(screened);
    total += page.length;
    const last = page[page.length - 1]!;
    after = { acceptedAt: last.acceptedAt, id: last.id };
    if (page.length < PAGE) break;
  }
  if (cut) deps.log.info('recovery of unfinished messages stopped with core; the next start goes on', { count: total });
  else if (total > 0) deps.log.info('re-dispatched unfinished messages', { count: total });
  return total;
}
