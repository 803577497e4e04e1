import type { Accounts } from '../accounts/accounts';
import type { RecentMessages } from '../messages/recent-messages';
import type { StatusChange } from '../messages/status-recorder';

/**
 * Whether a status change can end in a callback. Most applications that send
 * in bulk configure no receiver; for them a callback job (outbox write, bus
 * record, dispatch, outbox settle) would only end as `not_configured`. A
 * change is skipped only when the application's cached settings name no
 * receiver for it (they are as fresh as the dispatcher's, which reads the same
 * cache, and an update of the application clears them); when they are not
 * cached the job is made as before and the dispatcher decides. A change from
 * a carrier's receipt names no application: it is the message's, found among
 * the recent messages as the producer finds it, or else passed on.
 */
export function createCallbackInterest(
  accounts: Pick<Accounts, 'peekCallbackSettings'>,
  recent: Pick<RecentMessages, 'get'>,
): (change: StatusChange) => boolean {
  return (change) => {
    const applicationId = change.applicationId || recent.get(change.messageId)?.applicationId;
    if (!applicationId) return true;
    const settings = accounts.peekCallbackSettings(applicationId);
    if (!settings.known) return true;
    // Intelligent Messaging messages report to the IM receiver; everything else to the status receiver.
    const url = change.channel === 'im' ? settings.value?.imStatusCallbackUrl : settings.value?.statusCallbackUrl;
    return Boolean(url);
  };
}
