import type { ReplyContext } from '../ports/state';
import type { ReplyRoute } from './reply-router';

/**
 * Where a START goes (asksToOptBackIn: START, UNSTOP, SUBSCRIBE, OPTIN, OPT IN; not YES): to the application the rules chose
 * (routeReply) when the handset is opted out of it; else to an application
 * that claimed or sends from the address replied to and that the handset is
 * opted out of (`opted-out-from-address`). On a short code several
 * applications share, the last message to the handset may be another's than
 * the one it said STOP to; a START answering that would opt it into nothing,
 * and the opt-out it meant to end would stand for good. Answers the route
 * unchanged when no such application is found.
 */
export async function startRoute(
  route: ReplyRoute,
  context: Pick<ReplyContext, 'sendersOfAddress'>,
  claimedBy: string | undefined,
  handset: string,
  areOptedOut: (pairs: readonly { applicationId: string; handset: string }[]) => Promise<boolean[]>,
): Promise<ReplyRoute> {
  const others = [...new Set([claimedBy ?? '', ...context.sendersOfAddress])].filter((a) => a !== '' && a !== route.applicationId);
  if (others.length === 0) return route;
  const asked = route.applicationId ? [route.applicationId, ...others] : others;
  const opted = await areOptedOut(asked.map((applicationId) => ({ applicationId, handset })));
  if (route.applicationId && opted[0]) return route;
  const from = route.applicationId ? 1 : 0;
  const k = opted.slice(from).findIndex(Boolean);
  if (k < 0) return route;
  return { applicationId: others[k]!, replyTo: '', rule: 'opted-out-from-address' };
}
