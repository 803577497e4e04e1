import type { Client, ServiceError } from '@grpc/grpc-js';
import { fromServiceError } from '../lib/grpc-errors';
import { grpcDuration } from '../lib/metrics';

export const CALL_TIMEOUT_MS = 15_000;

type Callback<Res> = (err: ServiceError | null, res: Res) => void;

/** One unary call to core with a deadline, timed, its failure as the HermodError core threw. */
export function unaryCall<Req, Res>(
  client: Client,
  method: string,
  fn: (req: Req, opts: { deadline: Date }, cb: Callback<Res>) => unknown,
  req: Req,
  timeoutMs = CALL_TIMEOUT_MS,
): Promise<Res> {
  const end = grpcDuration.startTimer({ side: 'client', method });
  return new Promise((resolve, reject) => {
    fn.call(client, req, { deadline: new Date(Date.now() + timeoutMs) }, (err, res) => {
      end({ code: err ? String(err.code) : 'OK' });
      if (err) reject(fromServiceError(err));
      else resolve(res);
    });
  });
}
