import { parseIntegerId } from '../../lib/integer-id';
import { applicationNamed } from '../accounts/application-named';
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type { GetMessageRouteRequest, MessageRouteDetails } from '../../proto/gen/hermod/v1/message_routes';
import { HermodError } from '../../lib/errors';
import type { MessageReader } from '../messages/message-reader';
import type { AccountStore } from '../ports/account-store';
import type { History } from '../ports/history';
import { unaryHandler } from './unary-handler';
import { imAttemptId, MAX_IM_ATTEMPTS } from '../im/im-ids';

/** MessageRoutes: the route and carrier an application's message was submitted to, from history. */
export function messageRoutesService(deps: {
  applications: Pick<AccountStore, 'getApplicationByName'>;
  reader: MessageReader;
  history: Pick<History, 'getMessageRoute' | 'flush'>;
}): UntypedServiceImplementation {
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
      const route = await deps.history.getMessageRoute(app.id, message.id);
      if (!route && message.channel === 'im') {
        // An Intelligent Messaging message reaches carriers by its attempts: the last one submitted says where it went.
        for (let k = MAX_IM_ATTEMPTS - 1; k >= 0; k--) {
          const attemptId = imAttemptId(message.id, k);
          const attempt = await deps.history.getMessageRoute(app.id, attemptId);
          if (!attempt) continue;
          const channel = (await deps.reader.get(app.id, attemptId).catch(() => undefined))?.channel ?? '';
          return {
            id: shownId,
            status: message.status,
            route: `attempt ${k + 1}${channel ? ` (${channel})` : ''}: ${attempt.route || 'no route (not SMS)'}`,
            carrierId: attempt.carrierId,
            submittedAt: new Date(attempt.at),
            takenPartCarrierIds: [],
            parts: 0,
          };
        }
      }
      return {
        id: shownId,
        status: message.status,
        route: route?.route ?? '',
        carrierId: route?.carrierId ?? '',
        submittedAt: route ? new Date(route.at) : undefined,
        takenPartCarrierIds: route?.takenPartCarrierIds ?? [],
        parts: route?.takenPartCarrierIds ? message.segments : 0,
      };
    }),
  };
}
