import type { Metadata, sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { grpcCodeName, toServiceError } from '../../lib/grpc-errors';
import { grpcDuration } from '../../lib/metrics';

/** Starts timing a server call; the returned function ends it with the call's outcome. */
export function timeServerCall(method: string): (err?: unknown) => void {
  const end = grpcDuration.startTimer({ side: 'server', method });
  return (err?: unknown) => end({ code: err ? grpcCodeName(toServiceError(err).code) : 'OK' });
}

/** Wraps an async handler: one place maps every thrown error to a gRPC status and times the call. */
export function unaryHandler<Req, Res>(method: string, handler: (req: Req, metadata: Metadata) => Promise<Res>) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    const end = timeServerCall(method);
    handler(call.request, call.metadata).then(
      (res) => {
        end();
        callback(null, res);
      },
      (err: unknown) => {
        end(err);
        callback(toServiceError(err));
      },
    );
  };
}
