import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { HermodError, isErrorCode, toHermodError } from './errors';

const CODE_KEY = 'hermod-code';
const FIELDS_KEY = 'hermod-fields-bin';

/**
 * A gRPC status code as its name (`OK`, `NOT_FOUND`, `UNAVAILABLE` …), the
 * `code` label of hermod_grpc_call_duration_seconds whichever side timed the
 * call; `UNKNOWN` for anything that is not a status code.
 */
export function grpcCodeName(code: number | undefined): string {
  const name = code === undefined ? undefined : (GrpcStatus as unknown as Record<number, string>)[code];
  return typeof name === 'string' ? name : 'UNKNOWN';
}

/** Any error thrown by a core handler as a gRPC status carrying our code. */
export function toServiceError(err: unknown): Partial<ServiceError> {
  const e = toHermodError(err);
  const metadata = new Metadata();
  metadata.set(CODE_KEY, e.code);
  if (e.fields.length > 0) metadata.set(FIELDS_KEY, Buffer.from(JSON.stringify(e.fields)));
  return { code: e.grpcStatus, details: e.message, metadata };
}

/** A failed gRPC call as the HermodError core threw, or `unavailable` when core was not reached. */
export function fromServiceError(err: ServiceError): HermodError {
  const code = err.metadata?.get(CODE_KEY)[0];
  if (typeof code === 'string' && isErrorCode(code)) {
    const raw = err.metadata.get(FIELDS_KEY)[0];
    const fields = Buffer.isBuffer(raw) ? JSON.parse(raw.toString('utf8')) : [];
    return new HermodError(code, err.details, { fields });
  }
  if (err.code === GrpcStatus.DEADLINE_EXCEEDED) return new HermodError('timeout', 'core did not answer in time', { cause: err });
  if (err.code === GrpcStatus.UNAVAILABLE) return new HermodError('unavailable', 'core is unavailable', { cause: err });
  return new HermodError('internal', err.details || err.message, { cause: err });
}
