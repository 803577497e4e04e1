import { parseIntegerId } from '../../lib/integer-id';
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type {
  ApplicationCallbacks,
  CarrierBind,
  GetMessageJourneyRequest,
  JourneyEvent,
  MessageJourney,
  TopicBacklog,
} from '../../proto/gen/hermod/v1/operations';
import { HermodError } from '../../lib/errors';
import type { CallbackLedger } from '../callbacks/callback-ledger';
import type { AccountStore } from '../ports/account-store';
import type { Bus } from '../ports/bus';
import type { CarrierSnapshotState } from '../ports/carrier-snapshot';
import type { MessageHistory, StoredMessage } from '../ports/message-history';
import { journeyAttempts } from './journey-attempts';
import { inJourneyOrder } from './journey-order';
import { imJourney } from './im-journey';
import { unaryHandler } from './unary-handler';
import { CONSUMER_GROUPS } from '../ports/consumer-groups';

export interface OperationsDeps {
  state: CarrierSnapshotState;
  bus: Pick<Bus, 'lag'>;
  history: Pick<MessageHistory, 'findMessage' | 'findMessageByNumericId' | 'listEvents'> & Pick<AccountStore, 'listApplications'>;
  ledger: CallbackLedger;
  /** What each application is owed now (the callback outbox's count, as the metric shows it). */
  owedByApplication: () => ReadonlyMap<string, number>;
}

/** A bind whose reporter has not written for this long shows as down. */
export const STALE_AFTER_MS = 5000;

/** Every topic and the group that reads it. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A message by the UUID of the SMS API and IM, or the numeric id of Gateway v1 and campaign reports. */
async function findForOperator(history: OperationsDeps['history'], id: string): Promise<StoredMessage> {
  let message: StoredMessage | undefined;
  const numericId = parseIntegerId(id);
  if (UUID.test(id)) message = await history.findMessage(id.toLowerCase());
  else if (numericId !== undefined) message = await history.findMessageByNumericId(numericId);
  else
    throw new HermodError(
      'invalid_attrib',
      `message id must be a UUID such as 3f2504e0-4f89-41d3-9a0c-0305e82c3301 or a numeric id such as 375879781036153, got ${JSON.stringify(id)}`,
    );
  if (!message) throw new HermodError('not_found', `no message has the id ${id}`);
  return message;
}

const date = (ms: number): Date | undefined => (ms > 0 ? new Date(ms) : undefined);

/** The Operations service (proto/hermod/v1/operations.proto): what the operator console shows. */
export function operationsService(deps: OperationsDeps): UntypedServiceImplementation {
  const names = async (): Promise<Map<string, string>> => new Map((await deps.history.listApplications()).map((a) => [a.id, a.name]));
  return {
    listCarrierBinds: unaryHandler('ListCarrierBinds', async () => {
      const now = Date.now();
      const binds: CarrierBind[] = (await deps.state.listCarrierSnapshots()).map((s) => ({
        channel: s.channel,
        bind: s.bind,
        reporter: s.reporter,
        up: s.up && now - s.reportedAt < STALE_AFTER_MS,
        windowInUse: s.windowInUse,
        windowSize: s.windowSize,
        submitsPerSecond: s.submitsPerSecond,
        lastError: s.lastError,
        lastErrorAt: date(s.lastErrorAt),
        reportedAt: date(s.reportedAt),
      }));
      binds.sort((a, b) => a.channel.localeCompare(b.channel) || a.bind.localeCompare(b.bind) || a.reporter.localeCompare(b.reporter));
      return { binds };
    }),

    listBusBacklog: unaryHandler('ListBusBacklog', async () => {
      const topics: TopicBacklog[] = await Promise.all(
        CONSUMER_GROUPS.map(async ({ topic, group }) => {
          try {
            return { topic, group, records: await deps.bus.lag(topic, group), error: '' };
          } catch (err) {
            return { topic, group, records: 0, error: err instanceof Error ? err.message : String(err) };
          }
        }),
      );
      return { topics };
    }),

    listCallbackBacklog: unaryHandler('ListCallbackBacklog', async () => {
      const byId = await names();
      const owed = deps.owedByApplication();
      const tried = new Map(deps.ledger.applications().map((a) => [a.applicationId, a]));
      // An application owed callbacks none of which has been tried yet is listed too.
      const ids = new Set([...tried.keys(), ...[...owed].filter(([, n]) => n > 0).map(([id]) => id)]);
      const applications: ApplicationCallbacks[] = [...ids]
        .map((id) => {
          const a = tried.get(id);
          return {
            applicationId: id,
            applicationName: byId.get(id) ?? '',
            owed: owed.get(id) ?? 0,
            waiting: a?.waiting ?? 0,
            delivered: a?.delivered ?? 0,
            failedTries: a?.failedTries ?? 0,
            failed: a?.failed ?? 0,
            lastError: a?.lastError ?? '',
            lastErrorAt: date(a?.lastErrorAt ?? 0),
          };
        })
        .sort((a, b) => (a.applicationName || a.applicationId).localeCompare(b.applicationName || b.applicationId));
      return { applications };
    }),

    getMessageJourney: unaryHandler('GetMessageJourney', async (req: GetMessageJourneyRequest): Promise<MessageJourney> => {
      const message = await findForOperator(deps.history, req.id.trim());
      const stored = inJourneyOrder(await deps.history.listEvents(message.id));
      const handOvers = journeyAttempts(stored);
      const own: JourneyEvent[] = stored.map((e, i) => ({
        status: e.status,
        at: new Date(e.at),
        channel: message.channel,
        carrierId: e.carrierId,
        errorCode: e.errorCode,
        detail: e.detail,
        attempt: message.channel === 'im' ? 0 : handOvers.attemptOf[i]!,
      }));
      // An Intelligent Messaging message reaches carriers through its attempts: their events join its own.
      const { attempts, events } = message.channel === 'im' ? await imJourney(deps.history, message, own) : { attempts: handOvers.attempts, events: own };
      const byId = await names();
      return {
        id: message.id,
        applicationId: message.applicationId,
        applicationName: byId.get(message.applicationId) ?? '',
        channel: message.channel,
        direction: message.direction,
        destination: message.destination,
        source: message.source,
        status: message.status,
        acceptedAt: new Date(message.acceptedAt),
        attempts,
        events,
        callbacks: deps.ledger.triesOf(message.id).map((t) => ({
          at: new Date(t.at),
          kind: t.kind,
          url: t.url,
          attempt: t.attempt,
          httpStatus: t.httpStatus,
          outcome: t.outcome,
          error: t.error,
          event: t.event,
        })),
      };
    }),
  };
}
