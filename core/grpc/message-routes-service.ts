import { parseIntegerId } from '../../lib/integer-id';
import { applicationNamed } from '../accounts/application-named';
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type { GetMessageRouteRequest, MessageRouteDetails } from '../../proto/gen/hermod/v1/message_routes';
import { HermodError } from '../../lib/errors';
import type { MessageReader } from '../messages/message-reader';
import type { AccountStore } from '../ports/account-store';
import type { History } from '../ports/history';
import type { MessageRoute } from '../ports/message-history';
import { unaryHandler } from './unary-handler';
import { imAttemptId, MAX_IM_ATTEMPTS } from '../im/im-ids';

/** MessageRoutes: the route and carrier an application's message was submitted to, from history. */
export function messageRoutesService(deps: {
  applications: Pick<AccountStore, 'getApplicationByName'>;
  reader: MessageReader;
  history: Pick<History, 'getMessageRoute' | 'flush'>;
}): UntypedServiceImplementation {
  /**
   * An Intelligent Messaging message reaches carriers by its attempts: the last one made ended it (a fallback is made
   * only once the one before it failed or went unread), so its route and outcome are the message's, submitted or not.
   */
  const lastAttemptRoute = async (applicationId: string, messageId: string): Promise<Omit<MessageRouteDetails, 'id' | 'status'>> => {
    for (let k = MAX_IM_ATTEMPTS - 1; k >= 0; k--) {
      const attemptId = imAttemptId(messageId, k);
      const attempt = await deps.reader.get(applicationId, attemptId).catch((err: unknown) => {
        if (err instanceof HermodError && err.code === 'not_found') return undefined;
        throw err;
      });
      if (!attempt) continue;
      const route = await deps.history.getMessageRoute(applicationId, attemptId);
      const details = routeDetails(route, attempt.segments);
      const where = route ? route.route || 'no route (not SMS)' : 'not submitted';
      return { ...details, route: `attempt ${k + 1} (${attempt.channel}, ${attempt.status}): ${where}` };
    }
    return routeDetails(undefined, 0);
  };
  return {
    getMessageRoute: unaryHandler('GetMessageRoute', async (req: GetMessageRouteRequest): Promise<MessageRouteDetails> => {
      const app = await applicationNamed(deps.applications, req.applicationName);
      if (!app) throw new HermodError('not_found', `no application named ${req.applicationName}`);
      const id = req.id.trim();
      // Gateway v1 and campaign reports give their clients numeric ids.
      const numericId = parseIntegerId(id);
      const message = numericId !== undefined ? await deps.reader.getByNumericId(app.id, numericId) : await deps.reader.get(app.id, id);
      // Named as the operator named it: a Gateway v1 number is what its client and the operator know it by.
      const shownId = numericId !== undefined ? id : message.id;
      // An operator's question, rare: worth making the events recorded so far readable first.
      await deps.history.flush();
      if (message.channel === 'im') return { id: shownId, status: message.status, ...(await lastAttemptRoute(app.id, message.id)) };
      return { id: shownId, status: message.status, ...routeDetails(await deps.history.getMessageRoute(app.id, message.id), message.segments) };
    }),
  };
}

/** What history kept of a message's route, as MessageRouteDetails tells it (`segments`: how many parts the message has). */
function routeDetails(route: MessageRoute | undefined, segments: number): Omit<MessageRouteDetails, 'id' | 'status'> {
  return {
    route: route?.route ?? '',
    carrierId: route?.carrierId ?? '',
    submittedAt: route ? new Date(route.at) : undefined,
    takenPartCarrierIds: route?.takenPartCarrierIds ?? [],
    parts: route?.takenPartCarrierIds ? segments : 0,
  };
}
