import { credentials, type ServiceError, type Client } from '@grpc/grpc-js';
import { MessagingClient, type MessageDetails, type OutboundMessage, type ResolveShortLinkRequest, type ResolveShortLinkResponse, type SendResult } from '../proto/gen/hermod/v1/messages';
import { AccountsClient, type AuthenticateRequest, type AuthenticateResponse } from '../proto/gen/hermod/v1/accounts';
import { IdempotencyClient, type ClaimRequest, type ClaimResponse, type CompleteRequest, type ReleaseRequest } from '../proto/gen/hermod/v1/idempotency';
import { createBatcher } from '../lib/batcher';
import { fromServiceError } from '../lib/grpc-errors';
import { grpcDuration } from '../lib/metrics';

export interface CoreClient {
  /** One message; calls from concurrent requests share one SendMessages call. */
  send(message: OutboundMessage): Promise<SendResult>;
  getMessage(applicationId: string, id: string): Promise<MessageDetails>;
  getMessageByNumericId(applicationId: string, numericId: number): Promise<MessageDetails>;
  authenticate(request: AuthenticateRequest): Promise<AuthenticateResponse>;
  resolveShortLink(request: ResolveShortLinkRequest): Promise<ResolveShortLinkResponse>;
  claimIdempotencyKey(request: ClaimRequest): Promise<ClaimResponse>;
  completeIdempotencyKey(request: CompleteRequest): Promise<void>;
  releaseIdempotencyKey(request: ReleaseRequest): Promise<void>;
  close(): void;
}

const CALL_TIMEOUT_MS = 15_000;

type Callback<Res> = (err: ServiceError | null, res: Res) => void;

function call<Req, Res>(client: Client, method: string, fn: (req: Req, opts: { deadline: Date }, cb: Callback<Res>) => unknown, req: Req): Promise<Res> {
  const end = grpcDuration.startTimer({ side: 'client', method });
  return new Promise((resolve, reject) => {
    fn.call(client, req, { deadline: new Date(Date.now() + CALL_TIMEOUT_MS) }, (err, res) => {
      end({ code: err ? String(err.code) : 'OK' });
      if (err) reject(fromServiceError(err));
      else resolve(res);
    });
  });
}

export function createCoreClient(address: string, options: { batchMax: number; batchDelayMs: number }): CoreClient {
  const channelOptions = { 'grpc.keepalive_time_ms': 30_000, 'grpc.max_send_message_length': 64 * 1024 * 1024 };
  const messaging = new MessagingClient(address, credentials.createInsecure(), channelOptions);
  const accounts = new AccountsClient(address, credentials.createInsecure(), channelOptions);
  const idempotency = new IdempotencyClient(address, credentials.createInsecure(), channelOptions);
  const sends = createBatcher<OutboundMessage, SendResult>(
    async (messages) => {
      const res = await call(messaging, 'SendMessages', messaging.sendMessages as never, { messages });
      return (res as { results: SendResult[] }).results;
    },
    { maxItems: options.batchMax, maxDelayMs: options.batchDelayMs, maxConcurrent: 8 },
  );
  return {
    send: (message) => sends.add(message),
    getMessage: (applicationId, id) => call(messaging, 'GetMessage', messaging.getMessage as never, { applicationId, id, numericId: 0 }),
    getMessageByNumericId: (applicationId, numericId) => call(messaging, 'GetMessage', messaging.getMessage as never, { applicationId, id: '', numericId }),
    authenticate: (request) => call(accounts, 'Authenticate', accounts.authenticate as never, request),
    resolveShortLink: (request) => call(messaging, 'ResolveShortLink', messaging.resolveShortLink as never, request),
    claimIdempotencyKey: (request) => call(idempotency, 'Claim', idempotency.claim as never, request),
    completeIdempotencyKey: async (request) => void (await call(idempotency, 'Complete', idempotency.complete as never, request)),
    releaseIdempotencyKey: async (request) => void (await call(idempotency, 'Release', idempotency.release as never, request)),
    close() {
      messaging.close();
      accounts.close();
      idempotency.close();
    },
  };
}
