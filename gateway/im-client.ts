import type { ChannelCredentials } from '@grpc/grpc-js';
import {
  IntelligentMessagingClient,
  type CarrierEventsRequest,
  type ImAccepted,
  type ImSendRequest,
  type RateBudget,
  type RateBudgetRequest,
} from '../proto/gen/hermod/v1/im';
import { CarrierInboundClient, type CarrierInboundRequest } from '../proto/gen/hermod/v1/carrier_inbound';
import { unaryCall } from './unary-call';
import { CORE_CHANNEL_OPTIONS } from './core-channel-options';

/** The gateway's side of core's IntelligentMessaging service. */
export interface ImClient {
  send(request: ImSendRequest): Promise<ImAccepted>;
  reportCarrierEvents(request: CarrierEventsRequest): Promise<number>;
  /** Handsets' messages from a carrier's webhook (CarrierInbound service); resolves once core has them on its bus. */
  reportInbound(request: CarrierInboundRequest): Promise<number>;
  /** A share of the application's Intelligent Messaging requests for the current second. */
  takeRateBudget(request: RateBudgetRequest): Promise<RateBudget>;
  close(): void;
}

export function createImClient(address: string, channelCredentials: ChannelCredentials): ImClient {
  const client = new IntelligentMessagingClient(address, channelCredentials, CORE_CHANNEL_OPTIONS);
  const inbound = new CarrierInboundClient(address, channelCredentials, CORE_CHANNEL_OPTIONS);
  const unary = <Req, Res>(method: string, fn: unknown, req: Req): Promise<Res> => unaryCall<Req, Res>(client, method, fn as never, req);
  return {
    send: (request) => unary('ImSendMessage', client.sendMessage as never, request),
    reportCarrierEvents: async (request) =>
      (await unary<CarrierEventsRequest, { recorded: number }>('ReportCarrierEvents', client.reportCarrierEvents as never, request)).recorded,
    reportInbound: async (request) =>
      (await unaryCall<CarrierInboundRequest, { accepted: number }>(inbound, 'ReportInbound', inbound.reportInbound as never, request)).accepted,
    takeRateBudget: (request) => unary('TakeRateBudget', client.takeRateBudget as never, request),
    close: () => {
      client.close();
      inbound.close();
    },
  };
}
