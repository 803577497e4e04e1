import { credentials, type ServiceError } from '@grpc/grpc-js';
import { IntelligentMessagingClient, type CarrierEventsRequest, type ImAccepted, type ImSendRequest } from '../proto/gen/hermod/v1/im';
import { fromServiceError } from '../lib/grpc-errors';
import { grpcDuration } from '../lib/metrics';

/** The gateway's side of core's IntelligentMessaging service. */
export interface ImClient {
  send(request: ImSendRequest): Promise<ImAccepted>;
  reportCarrierEvents(request: CarrierEventsRequest): Promise<number>;
  close(): void;
}

const TIMEOUT_MS = 15_000;

export function createImClient(address: string): ImClient {
  const client = new IntelligentMessagingClient(address, credentials.createInsecure(), { 'grpc.keepalive_time_ms': 30_000 });
  const unary = <Req, Res>(method: string, fn: (req: Req, opts: object, cb: (err: ServiceError | null, res: Res) => void) => unknown, req: Req): Promise<Res> => {
    const end = grpcDuration.startTimer({ side: 'client', method });
    return new Promise((resolve, reject) =>
      fn.call(client, req, { deadline: new Date(Date.now() + TIMEOUT_MS) }, (err: ServiceError | null, res: Res) => {
        end({ code: err ? String(err.code) : 'OK' });
        if (err) reject(fromServiceError(err));
        else resolve(res);
      }),
    );
  };
  return {
    send: (request) => unary('ImSendMessage', client.sendMessage as never, request),
    reportCarrierEvents: async (request) => (await unary<CarrierEventsRequest, { recorded: number }>('ReportCarrierEvents', client.reportCarrierEvents as never, request)).recorded,
    close: () => client.close(),
  };
}
