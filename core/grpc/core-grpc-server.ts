import { Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { MAX_PREVIOUS_SECRET_MS } from '../domain/previous-secret';
import net from 'node:net';
import { MessagingService, Direction, type MessageDetails, type OutboundMessage, type SendResult } from '../../proto/gen/hermod/v1/messages';
import { AccountsService, type AuthenticateResponse } from '../../proto/gen/hermod/v1/accounts';
import { campaignsService, type CampaignServices } from './campaigns-service';
import { CampaignsServiceWithReportWire } from '../../proto/report-chunk-wire';
import { CampaignControlService } from '../../proto/gen/hermod/v1/campaign_control';
import { campaignControlService, type CampaignControlServices } from './campaign-control-service';
import { IntelligentMessagingService } from '../../proto/gen/hermod/v1/im';
import { imService } from './im-service';
import { CarrierInboundService } from '../../proto/gen/hermod/v1/carrier_inbound';
import { carrierInboundService } from './carrier-inbound-service';
import { MessageRoutesService } from '../../proto/gen/hermod/v1/message_routes';
import { messageRoutesService } from './message-routes-service';
import { unaryHandler } from './unary-handler';
import { OperationsService } from '../../proto/gen/hermod/v1/operations';
import { operationsService, type OperationsDeps } from './operations-service';
import { withCallSpans, withItemSpans } from './call-spans';
import { createSendStreams, type SendStreams } from './send-streams';
import { carryTrace, traceOf } from '../../lib/tracing';
import { IdempotencyService } from '../../proto/gen/hermod/v1/idempotency';
import { idempotencyService } from './idempotency-service';
import type { HotState } from '../ports/state';
import type { MessageIntake, NewMessage } from '../messages/message-intake';
import type { MessageReader } from '../messages/message-reader';
import { checkQuota, type Accounts } from '../accounts/accounts';
import type { BlockLists } from '../accounts/block-lists';
import { HermodError } from '../../lib/errors';
import { ConfigError } from '../../lib/config';
import { newApiKey } from '../domain/api-key';
import { checkCallbackUrlSyntax } from '../callbacks/callback-url';
import { parseAttemptList } from '../im/im-plan';

export interface CoreServices {
  shortener: import('../messages/link-shortener').LinkShortener;
  state: HotState;
  /** How long an Idempotency-Key and its answer are kept. */
  idempotencyTtlMs: number;
  /** How long a claim without its answer is held unless renewed (a gateway that died mid-request renews it no more). */
  idempotencyLeaseMs: number;
  intake: MessageIntake;
  reader: MessageReader;
  accounts: Accounts;
  blockLists: BlockLists;
  campaigns: CampaignServices;
  campaignControl: CampaignControlServices;
  im: Parameters<typeof imService>[0];
  operations: OperationsDeps;
  routes: Parameters<typeof messageRoutesService>[0];
}

/** Stores a batch of sends and answers each message: its id, or its own failure. */
function createSendBatch(intake: MessageIntake) {
  return async (messages: readonly OutboundMessage[]): Promise<SendResult[]> => {
    const inputs: NewMessage[] = messages.map((m) => {
      if (!m.applicationId) throw new HermodError('unauthorized', 'application is required');
      const input: NewMessage = {
        applicationId: m.applicationId,
        channel: m.channel || 'sms',
        destination: m.destination,
        content: m.content,
        source: m.source,
        reference: m.reference,
        messageClass: m.messageClass,
        mask: m.mask,
        smsClass: m.smsClass,
        scheduledAt: m.scheduled ? m.scheduled.getTime() : 0,
        integrationId: m.integrationId,
        via: m.interface,
        ...(m.dedupKey ? { dedupKey: m.dedupKey } : {}),
      };
      // The message's server span (withCallSpans, withItemSpans) goes on with it to the bus hand-off.
      carryTrace(input, traceOf(m));
      return input;
    });
    const results = await intake.accept(inputs);
    return results.map(
      (r): SendResult =>
        r.ok
          ? { outcome: { $case: 'accepted', value: { id: r.id, status: 'accepted', numericId: r.numericId, replayed: r.replayed ?? false } } }
          : { outcome: { $case: 'failure', value: { code: r.error.code, message: r.error.message } } },
    );
  };
}

export interface CoreGrpcServer {
  server: Server;
  /** Ends the gateways' send streams (see send-streams.ts): before the server's graceful shutdown, which waits on every open call. */
  endSendStreams(): Promise<void>;
}

export function createCoreGrpcServer(services: CoreServices): CoreGrpcServer {
  const sendBatch = createSendBatch(services.intake);
  const sendStreams = createSendStreams((messages, traces) =>
    withItemSpans('hermod.v1.Messaging/SendMessageStream', traces, messages, () => sendBatch(messages)),
  );
  const server = new Server({
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    'grpc.keepalive_time_ms': 30_000,
  });

  const messaging: UntypedServiceImplementation = {
    sendMessages: unaryHandler('SendMessages', async (req: { messages: OutboundMessage[] }, metadata) => ({
      results: await withCallSpans('hermod.v1.Messaging/SendMessages', metadata, req.messages, () => sendBatch(req.messages)),
    })),
    sendMessageStream: (call: Parameters<SendStreams['handle']>[0]) => sendStreams.handle(call),
    getMessage: unaryHandler('GetMessage', async (req: { applicationId: string; id: string; numericId: number }): Promise<MessageDetails> => {
      const m = req.id ? await services.reader.get(req.applicationId, req.id) : await services.reader.getByNumericId(req.applicationId, req.numericId);
      return {
        id: m.id,
        numericId: m.numericId,
        messageClass: m.messageClass,
        mask: m.mask,
        smsClass: m.smsClass,
        scheduled: m.scheduledAt > 0 ? new Date(m.scheduledAt) : undefined,
        applicationId: m.applicationId,
        direction: m.direction === 'MO' ? Direction.DIRECTION_MO : Direction.DIRECTION_MT,
        destination: m.destination,
        source: m.source,
        content: m.content,
        reference: m.reference,
        status: m.status,
        acceptedAt: new Date(m.acceptedAt),
        statusAt: new Date(m.statusAt),
        segments: m.segments,
        channel: m.channel,
      };
    }),
  };

  messaging.resolveShortLink = unaryHandler('ResolveShortLink', async (req: { code: string; userAgent: string; ip: string }) => ({
    url: await services.shortener.resolve(req.code, { userAgent: req.userAgent, ip: req.ip }),
  }));

  const accounts: UntypedServiceImplementation = {
    authenticate: unaryHandler('Authenticate', async (req: import('../../proto/gen/hermod/v1/accounts').AuthenticateRequest): Promise<AuthenticateResponse> => {
      const c = req.credential;
      const app: { id: string; name: string; passwordTag?: string } | undefined =
        c?.$case === 'basic'
          ? await services.accounts.authenticateBasic(c.value.name, c.value.password)
          : c?.$case === 'basicRecheck'
            ? await services.accounts.recheckBasic(c.value.name, c.value.passwordTag)
            : c?.$case === 'apiKey'
              ? await services.accounts.authenticateApiKey(c.value)
              : undefined;
      if (!app) return { ok: false, application: undefined, passwordTag: '' };
      return {
        ok: true,
        application: {
          id: app.id,
          name: app.name,
          callbackSecret: '',
          previousCallbackSecretUntil: '',
          endedPreviousSecretPrefix: '',
          endedPreviousSecretUntil: '',
          replacedSecretPrefix: '',
        },
        passwordTag: app.passwordTag ?? '',
      };
    }),
    upsertApplication: unaryHandler('UpsertApplication', async (req: import('../../proto/gen/hermod/v1/accounts').UpsertApplicationRequest) => {
      for (const url of [req.statusCallbackUrl, req.replyCallbackUrl, req.imStatusCallbackUrl]) if (url) checkCallbackUrlSyntax(url);
      if (req.imDefaultAttempts) parseAttemptList(req.imDefaultAttempts);
      if (req.imRateLimit !== undefined && !(Number.isInteger(req.imRateLimit) && req.imRateLimit >= -1 && req.imRateLimit <= 100)) {
        throw new HermodError('invalid_attrib', 'im_rate_limit is 0..100 requests per second, or -1 for the service default');
      }
      if (req.previousSecretValidSeconds * 1000 > MAX_PREVIOUS_SECRET_MS) {
        throw new HermodError('invalid_attrib', 'previous_secret_valid_seconds is at most 7 days (604800)');
      }
      const quota = req.quota === undefined ? undefined : req.quota.messages === 0 ? null : checkQuota(req.quota.messages, req.quota.period);
      const app = await services.accounts.upsert({
        name: req.name,
        password: req.password,
        apiKey: req.apiKey,
        revokeApiKey: req.revokeApiKey,
        statusCallbackUrl: req.statusCallbackUrl,
        replyCallbackUrl: req.replyCallbackUrl,
        imStatusCallbackUrl: req.imStatusCallbackUrl,
        imDefaultAttempts: req.imDefaultAttempts,
        sourceAddresses: req.sourceAddresses?.addresses,
        imRateLimit: req.imRateLimit,
        quota,
        callbackSecret: req.rotateCallbackSecret ? newApiKey() : undefined,
        previousSecretValidMs: req.rotateCallbackSecret ? req.previousSecretValidSeconds * 1000 : undefined,
      });
      const settings = await services.accounts.callbackSettings(app.id);
      const until = settings?.previousCallbackSecretUntil ?? 0;
      return {
        id: app.id,
        name: app.name,
        callbackSecret: settings?.callbackSecret ?? '',
        previousCallbackSecretUntil: until > Date.now() ? new Date(until).toISOString() : '',
        // Enough of it to tell which one it was (`hmd_` and four more), not enough to sign with.
        endedPreviousSecretPrefix: app.endedOverlap ? app.endedOverlap.secret.slice(0, 8) : '',
        endedPreviousSecretUntil: app.endedOverlap ? new Date(app.endedOverlap.until).toISOString() : '',
        replacedSecretPrefix: app.replacedSecret ? app.replacedSecret.slice(0, 8) : '',
      };
    }),
    listApplications: unaryHandler('ListApplications', async () => ({ applications: await services.accounts.list() })),
    listOptOuts: unaryHandler('ListOptOuts', async (req: { applicationName: string }) => ({
      optOuts: await services.accounts.listOptOuts(req.applicationName || undefined),
    })),
    updateBlockList: unaryHandler('UpdateBlockList', async (req: { applicationName: string; prefixes: string[]; blocked: boolean }) => ({
      entries: await services.blockLists.update(req.applicationName, req.prefixes, req.blocked),
    })),
    listBlockList: unaryHandler('ListBlockList', async (req: { applicationName: string }) => ({
      entries: await services.blockLists.list(req.applicationName),
    })),
  };

  server.addService(MessagingService, messaging);
  server.addService(IdempotencyService, idempotencyService({ state: services.state, ttlMs: services.idempotencyTtlMs, leaseMs: services.idempotencyLeaseMs }));
  server.addService(AccountsService, accounts);
  server.addService(CampaignsServiceWithReportWire, campaignsService(services.campaigns));
  server.addService(CampaignControlService, campaignControlService(services.campaignControl));
  server.addService(IntelligentMessagingService, imService(services.im));
  server.addService(OperationsService, operationsService(services.operations));
  server.addService(CarrierInboundService, carrierInboundService({ bus: services.im.bus }));
  server.addService(MessageRoutesService, messageRoutesService(services.routes));
  return { server, endSendStreams: () => sendStreams.close() };
}

/** Where core serves gRPC: the port it got (the one asked for, or the system's choice for 0), and how to stop listening. */
export interface BoundServer {
  port: number;
  /** Stops accepting; resolves once every connection it accepted has closed (grpc-js closes them on shutdown). */
  close(): Promise<void>;
}

/**
 * Serves `server` on `address` (`host:port`, `[v6]:port`) from a socket this
 * process binds itself, handing each connection to grpc-js. Under `hermod
 * start` core is a cluster worker, where a plain listen is bound by the
 * primary and shared by every worker that asks for the same address and port:
 * on port 0, core and the gateways would be handed one port. An `exclusive`
 * listen is core's alone. Accepted sockets get TCP_NODELAY, which grpc-js sets
 * on its client sockets but not on those its server accepts: with Nagle on, a
 * response written as several small frames can wait for the client's delayed ACK.
 */
export async function bindServer(
  server: Server,
  address: string,
  serverCredentials: ServerCredentials = ServerCredentials.createInsecure(),
): Promise<BoundServer> {
  const injector = server.createConnectionInjector(serverCredentials);
  const listener = await listenOn(address, (socket) => {
    socket.setNoDelay(true);
    injector.injectConnection(socket);
  });
  return {
    port: (listener.address() as net.AddressInfo).port,
    close: () => new Promise<void>((resolve) => listener.close(() => resolve())),
  };
}

/**
 * Fails as bindServer would when another process holds `address`, binding it
 * only for that moment: core asks first of all it starts, so a port another
 * core holds stops the start before it logs in to a carrier or starts a
 * worker. The port is bound for good only once core can answer (a readiness
 * probe on it means core is up).
 */
export async function checkPortFree(address: string): Promise<void> {
  const listener = await listenOn(address, (socket) => socket.destroy());
  await new Promise<void>((resolve) => listener.close(() => resolve()));
}

async function listenOn(address: string, onConnection: (socket: net.Socket) => void): Promise<net.Server> {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(address);
  if (!m) throw new ConfigError(`HERMOD_CORE_ADDRESS must be host:port or [v6]:port, got ${JSON.stringify(address)}`);
  const listener = net.createServer(onConnection);
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen({ host: m[1] ?? m[2], port: Number(m[3]), exclusive: true }, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  return listener;
}
