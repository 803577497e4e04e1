/**
 * The channel options of every gateway and console client of core. gRPC's
 * default reconnect backoff grows from 1 s to 120 s while core is away, and
 * the channel fails calls without trying until its next attempt: after core
 * restarted with a large backlog to recover (71 s in an operator's trial), the
 * gateways answered 503 for some 30 s more while it listened. A connect to a
 * core that is not there is refused at once, so trying every second costs
 * nothing, and a core that is back serves within a second.
 */
export const CORE_CHANNEL_OPTIONS = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.initial_reconnect_backoff_ms': 250,
  'grpc.max_reconnect_backoff_ms': 1_000,
} as const;
