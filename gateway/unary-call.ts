import type { Client, Metadata, ServiceError } from '@grpc/grpc-js';
import { fromServiceError, grpcCodeName } from '../lib/grpc-errors';
import { grpcDuration } from '../lib/metrics';

export const CALL_TIMEOUT_MS = 15_000;

type Callback<Res> = (err: ServiceError | null, res: Res) => void;

/** One unary call to core with a deadline, timed, its failure as the HermodError core threw. */
export function unaryCall<Req, Res>(
  client: Client,
  method: string,
  fn: (req: Req, ...rest: unknown[]) => unknown,
  req: Req,
  timeoutMs = CALL_TIMEOUT_MS,
  /** Headers of the call (the traces of its items, see lib/grpc-trace.ts). */
  metadata?: Metadata,
): Promise<Res> {
  const end = grpcDuration.startTimer({ side: 'client', method });
  return new Promise((resolve, reject) => {
    const done: Callback<Res> = (err, res) => {
      end({ code: err ? grpcCodeName(err.code) : 'OK' });
      if (err) reject(fromServiceError(err));
      else resolve(res);
    };
    const options = { deadline: new Date(Date.now() + timeoutMs) };
    if (metadata) fn.call(client, req, metadata, options, done);
    else fn.call(client, req, options, done);
  });
}
