/**
 * gRPC's status codes (grpc/grpc doc/statuscode.md), the numbers every gRPC
 * implementation sends. lib/errors.ts maps hermod's failures onto them without
 * loading @grpc/grpc-js, which every process loads errors.ts for and some (the
 * supervisor, the simulators) never speak gRPC: some 35 ms of each start.
 */
export const GrpcStatusCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
