import type { status as GrpcStatus } from '@grpc/grpc-js';
import { GrpcStatusCode } from './grpc-status-codes';

/**
 * The closed set of failure kinds. Every layer throws HermodError with one of
 * these codes; each REST interface renders it in its own body shape, gRPC maps
 * it to a status, and retry logic reads only `retryable`.
 */
export const ERROR_CODES = {
  invalid_json: { http: 400, grpc: GrpcStatusCode.INVALID_ARGUMENT, retryable: false },
  missing_attrib: { http: 400, grpc: GrpcStatusCode.INVALID_ARGUMENT, retryable: false },
  invalid_attrib: { http: 400, grpc: GrpcStatusCode.INVALID_ARGUMENT, retryable: false },
  unsupported_media_type: { http: 415, grpc: GrpcStatusCode.INVALID_ARGUMENT, retryable: false },
  broadcast_limit: { http: 400, grpc: GrpcStatusCode.INVALID_ARGUMENT, retryable: false },
  body_too_large: { http: 413, grpc: GrpcStatusCode.RESOURCE_EXHAUSTED, retryable: false },
  // Refused by Node's HTTP parser before any route (gateway/http/header-overflow.ts).
  headers_too_large: { http: 431, grpc: GrpcStatusCode.INVALID_ARGUMENT, retryable: false },
  // An Expect the gateway does not meet (only 100-continue is), RFC 9110 §10.1.1.
  expectation_failed: { http: 417, grpc: GrpcStatusCode.FAILED_PRECONDITION, retryable: false },
  // A transfer coding besides chunked (gzip, deflate), which hermod does not decode: RFC 9112 §6.1 answers 501.
  not_implemented: { http: 501, grpc: GrpcStatusCode.UNIMPLEMENTED, retryable: false },
  // The body stopped arriving for HERMOD_REQUEST_IDLE_TIMEOUT, or came slower than HERMOD_REQUEST_MIN_RATE (gateway/http/request-timeouts.ts).
  request_timeout: { http: 408, grpc: GrpcStatusCode.DEADLINE_EXCEEDED, retryable: true },
  unauthorized: { http: 401, grpc: GrpcStatusCode.UNAUTHENTICATED, retryable: false },
  forbidden: { http: 403, grpc: GrpcStatusCode.PERMISSION_DENIED, retryable: false },
  not_found: { http: 404, grpc: GrpcStatusCode.NOT_FOUND, retryable: false },
  method_not_allowed: { http: 405, grpc: GrpcStatusCode.UNIMPLEMENTED, retryable: false },
  conflict: { http: 409, grpc: GrpcStatusCode.ALREADY_EXISTS, retryable: false },
  unprocessable: { http: 422, grpc: GrpcStatusCode.FAILED_PRECONDITION, retryable: false },
  rate_limited: { http: 429, grpc: GrpcStatusCode.RESOURCE_EXHAUSTED, retryable: true },
  // Too many wrong credentials from an address or for an application: refused until its back-off ends (gateway/failed-auth-limiter.ts).
  too_many_auth_failures: { http: 429, grpc: GrpcStatusCode.RESOURCE_EXHAUSTED, retryable: true },
  // The application's message quota for the period is used up (a new period or the operator lifts it).
  quota_exceeded: { http: 403, grpc: GrpcStatusCode.RESOURCE_EXHAUSTED, retryable: false },
  unavailable: { http: 503, grpc: GrpcStatusCode.UNAVAILABLE, retryable: true },
  timeout: { http: 504, grpc: GrpcStatusCode.DEADLINE_EXCEEDED, retryable: true },
  carrier_rejected: { http: 502, grpc: GrpcStatusCode.FAILED_PRECONDITION, retryable: false },
  carrier_transient: { http: 503, grpc: GrpcStatusCode.UNAVAILABLE, retryable: true },
  internal: { http: 500, grpc: GrpcStatusCode.INTERNAL, retryable: false },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldProblem {
  field: string;
  description: string;
}

export class HermodError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly fields: readonly FieldProblem[];
  /** Seconds to wait before trying again, answered as `Retry-After` (gateway/http/interface-handler.ts). */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, options: { fields?: FieldProblem[]; retryable?: boolean; retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'HermodError';
    this.code = code;
    this.retryable = options.retryable ?? ERROR_CODES[code].retryable;
    this.fields = options.fields ?? [];
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get httpStatus(): number {
    return ERROR_CODES[this.code].http;
  }

  get grpcStatus(): GrpcStatus {
    return ERROR_CODES[this.code].grpc;
  }
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CODES, value);
}

/** Any thrown value as a HermodError; unknown failures become `internal`. */
export function toHermodError(err: unknown): HermodError {
  if (err instanceof HermodError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new HermodError('internal', message, { cause: err });
}
