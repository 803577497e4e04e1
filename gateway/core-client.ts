import type { ChannelCredentials } from '@grpc/grpc-js';
import {
  MessagingClient,
  type MessageDetails,
  type OutboundMessage,
  type ResolveShortLinkRequest,
  type ResolveShortLinkResponse,
  type SendResult,
} from '../proto/gen/hermod/v1/messages';
import { AccountsClient, type AuthenticateRequest, type AuthenticateResponse } from '../proto/gen/hermod/v1/accounts';
import {
  IdempotencyClient,
  type ClaimManyRequest,
  type ClaimManyResponse,
  type ClaimRequest,
  type ClaimResponse,
  type CompleteManyRequest,
  type CompleteManyResponse,
  type CompleteRequest,
  type CompleteResponse,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResponse,
} from '../proto/gen/hermod/v1/idempotency';
import { createBatcher } from '../lib/batcher';
import { unaryCall } from './unary-call';
import { tracedSend } from './traced-send';
import { createSendStream } from './send-stream';
import { manyCall } from './many-call';
import { CORE_CHANNEL_OPTIONS } from './core-channel-options';

export interface CoreClient {
  /** One message; concurrent requests share one batch on the SendMessageStream. */
  send(message: OutboundMessage): Promise<SendResult>;
  getMessage(applicationId: string, id: string): Promise<MessageDetails>;
  getMessageByNumericId(applicationId: string, numericId: number): Promise<MessageDetails>;
  authenticate(request: AuthenticateRequest): Promise<AuthenticateResponse>;
  resolveShortLink(request: ResolveShortLinkRequest): Promise<ResolveShortLinkResponse>;
  claimIdempotencyKey(request: ClaimRequest): Promise<ClaimResponse>;
  renewIdempotencyKey(request: RenewRequest): Promise<RenewResponse>;
  completeIdempotencyKey(request: CompleteRequest): Promise<CompleteResponse>;
  releaseIdempotencyKey(request: ReleaseRequest): Promise<void>;
  close(): void;
}

export function createCoreClient(address: string, channelCredentials: ChannelCredentials, options: { batchMax: number; batchDelayMs: number }): CoreClient {
  const channelOptions = { ...CORE_CHANNEL_OPTIONS, 'grpc.max_send_message_length': 64 * 1024 * 1024 };
  const messaging = new MessagingClient(address, channelCredentials, channelOptions);
  const accounts = new AccountsClient(address, channelCredentials, channelOptions);
  const idempotency = new IdempotencyClient(address, channelCredentials, channelOptions);
  const stream = createSendStream(messaging);
  const sends = createBatcher<OutboundMessage, SendResult>((messages) => stream.send(messages), {
    maxItems: options.batchMax,
    maxDelayMs: options.batchDelayMs,
    maxConcurrent: 8,
  });
  return {
    send: (message) => tracedSend(message, (m) => sends.add(m)),
    getMessage: (applicationId, id) => unaryCall(messaging, 'GetMessage', messaging.getMessage as never, { applicationId, id, numericId: 0 }),
    getMessageByNumericId: (applicationId, numericId) =>
      unaryCall(messaging, 'GetMessage', messaging.getMessage as never, { applicationId, id: '', numericId }),
    authenticate: (request) => unaryCall(accounts, 'Authenticate', accounts.authenticate as never, request),
    resolveShortLink: (request) => unaryCall(messaging, 'ResolveShortLink', messaging.resolveShortLink as never, request),
    claimIdempotencyKey: manyCall<ClaimRequest, ClaimResponse>(
      async (claims) => (await unaryCall<ClaimManyRequest, ClaimManyResponse>(idempotency, 'ClaimMany', idempotency.claimMany as never, { claims })).results,
      (request) => unaryCall(idempotency, 'Claim', idempotency.claim as never, request),
    ),
    renewIdempotencyKey: (request) => unaryCall(idempotency, 'Renew', idempotency.renew as never, request),
    completeIdempotencyKey: manyCall<CompleteRequest, CompleteResponse>(
      async (completes) =>
        (await unaryCall<CompleteManyRequest, CompleteManyResponse>(idempotency, 'CompleteMany', idempotency.completeMany as never, { completes })).results,
      (request) => unaryCall(idempotency, 'Complete', idempotency.complete as never, request),
    ),
    releaseIdempotencyKey: async (request) => void (await unaryCall(idempotency, 'Release', idempotency.release as never, request)),
    close() {
      stream.close();
      messaging.close();
      accounts.close();
      idempotency.close();
    },
  };
}
