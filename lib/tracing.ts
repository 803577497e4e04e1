/**
 * The one door to OpenTelemetry traces. Code on the message path calls these
 * helpers; while tracing is off (no OTLP endpoint set) each is a check of one
 * variable and nothing else: no OpenTelemetry module is loaded, no span is
 * made, no trace field is written to a bus record. `startTracing` loads the
 * SDK (otel-tracing.ts) only when the configuration turns tracing on.
 *
 * A trace crosses processes as a W3C `traceparent` string: in HTTP and gRPC
 * headers, and in the payloads of bus records (so it rides on every bus the
 * same way). Within a process, work that is batched (a gRPC call carrying many
 * messages, a bus publish of many records) keeps each item's trace on the item
 * itself (`carryTrace`/`traceOf`), not in the async context of the batch.
 */
export type SpanKindName = 'server' | 'client' | 'producer' | 'consumer' | 'internal';

export type SpanAttributes = Record<string, string | number | boolean>;

export interface SpanOptions {
  kind: SpanKindName;
  /**
   * The parent as a `traceparent`; null: a new trace; absent: the span active
   * here (or a new trace). Spans whose parent may be unknown pass null, so a
   * context an event emitter captured long ago cannot adopt them.
   */
  parent?: string | null;
  attributes?: SpanAttributes;
}

export interface TraceSpan {
  /** This span as a `traceparent`, to carry to the next hop. */
  readonly traceparent: string;
  setAttribute(key: string, value: string | number | boolean): void;
  updateName(name: string): void;
  /** Ends the span; an error marks it failed. */
  end(error?: unknown): void;
  /** Runs `fn` with this span active (log lines and child spans see it). */
  run<T>(fn: () => T): T;
}

/** What otel-tracing.ts provides once loaded. */
export interface Tracing {
  startSpan(name: string, options: SpanOptions): TraceSpan;
  activeTraceparent(): string | undefined;
  /** trace_id and span_id of the active span, for log lines. */
  logFields(): { trace_id: string; span_id: string } | undefined;
  shutdown(): Promise<void>;
}

let tracing: Tracing | undefined;

/** Puts an implementation in place (startTracing; unit tests with an in-memory exporter), or takes it away. */
export function installTracing(implementation: Tracing | undefined): void {
  tracing = implementation;
}

export const tracingOn = (): boolean => tracing !== undefined;

/** A span, or undefined while tracing is off. */
export function startSpan(name: string, options: SpanOptions): TraceSpan | undefined {
  return tracing?.startSpan(name, options);
}

/**
 * Runs `fn` inside a span ended with its outcome; while tracing is off, just
 * runs it and hands back its very promise (no extra turn of the event loop).
 */
export function inSpan<T>(name: string, options: SpanOptions, fn: () => Promise<T>): Promise<T> {
  return tracing ? spanAround(tracing, name, options, fn) : fn();
}

async function spanAround<T>(tracing: Tracing, name: string, options: SpanOptions, fn: () => Promise<T>): Promise<T> {
  const span = tracing.startSpan(name, options);
  try {
    const result = await span.run(fn);
    span.end();
    return result;
  } catch (err) {
    span.end(err);
    throw err;
  }
}

/** The active span as a `traceparent` (undefined while off or outside any span). */
export function activeTraceparent(): string | undefined {
  return tracing?.activeTraceparent();
}

export function traceLogFields(): { trace_id: string; span_id: string } | undefined {
  return tracing?.logFields();
}

const carried = new WeakMap<object, string>();

/** Keeps a trace with an item on its way through batches (no-op while off). */
export function carryTrace(item: object, traceparent: string | undefined): void {
  if (tracing && traceparent) carried.set(item, traceparent);
}

export function traceOf(item: object): string | undefined {
  return tracing ? carried.get(item) : undefined;
}

/**
 * Turns tracing on when the configuration says so: loads the SDK, exports
 * over OTLP/HTTP, and names this process's role in the resource. Returns how
 * to flush and stop it.
 */
export async function startTracing(
  config: { enabled: boolean; endpoint: string; protocol: string },
  role: string,
  // Structural, not lib/log's Logger: log.ts reads the active trace from here.
  log: { info(msg: string, fields?: Record<string, unknown>): void; warn(msg: string, fields?: Record<string, unknown>): void },
): Promise<{ stop(): Promise<void> }> {
  if (!config.enabled) return { stop: async () => undefined };
  const { createOtlpTracing } = await import('./otel-tracing');
  const implementation = await createOtlpTracing(role, log);
  installTracing(implementation);
  log.info('exporting traces over OTLP', { endpoint: config.endpoint, protocol: 'http/json' });
  if (config.protocol && config.protocol !== 'http/json')
    log.warn('OTEL_EXPORTER_OTLP_PROTOCOL is not honoured: traces go as OTLP/HTTP with JSON bodies', { protocol: config.protocol });
  return {
    async stop() {
      installTracing(undefined);
      // An unreachable collector must not hold up the process's stop (its grace is for messages): 2 s at most.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          log.warn('traces not flushed within 2 s; stopping without them');
          resolve();
        }, 2000);
      });
      const flushed = implementation.shutdown().catch((err: unknown) => log.warn('could not flush traces', { err }));
      await Promise.race([flushed, late]);
      clearTimeout(timer);
    },
  };
}
