import { AsyncLocalStorage } from 'node:async_hooks';
import os from 'node:os';
import { type Context, DiagLogLevel, diag, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { SpanKindName, SpanOptions, TraceSpan, Tracing } from './tracing';

/**
 * The OpenTelemetry side of lib/tracing.ts, loaded only when tracing is on.
 * Nothing is registered globally: hermod's spans come from its own provider
 * and its own async context, so a library that reads the global API sees
 * nothing, and tests can set up one provider after another.
 */
const KINDS: Record<SpanKindName, SpanKind> = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
  internal: SpanKind.INTERNAL,
};

const FLAGS_SAMPLED = 1;

export function traceparentOf(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-0${(c.traceFlags & FLAGS_SAMPLED).toString(16)}`;
}

/** A tracing over the given span processors (the OTLP exporter's batch processor; an in-memory exporter in tests). */
export function createTracing(options: { spanProcessors: SpanProcessor[]; attributes?: Record<string, string | number> }): Tracing {
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'hermod', ...options.attributes }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: options.spanProcessors });
  const tracer: Tracer = provider.getTracer('hermod');
  const active = new AsyncLocalStorage<Context>();

  const parentContext = (parent: string | null | undefined): Context => {
    if (parent === undefined) return active.getStore() ?? ROOT_CONTEXT;
    const spanContext = parent === null ? null : parseTraceParent(parent);
    return spanContext ? trace.setSpanContext(ROOT_CONTEXT, { ...spanContext, isRemote: true }) : ROOT_CONTEXT;
  };

  /**
   * The active span, unless it has ended: a socket or timer made inside a
   * span keeps that context for good, and what runs from it later is no part
   * of that span's work.
   */
  const current = (): Span | undefined => {
    const span = trace.getSpan(active.getStore() ?? ROOT_CONTEXT);
    return span && (span as { ended?: boolean }).ended !== true ? span : undefined;
  };

  return {
    startSpan(name: string, o: SpanOptions): TraceSpan {
      const span = tracer.startSpan(
        name,
        { kind: KINDS[o.kind], attributes: o.attributes },
        o.parent === undefined && !current() ? ROOT_CONTEXT : parentContext(o.parent),
      );
      const context = trace.setSpan(ROOT_CONTEXT, span);
      return {
        traceparent: traceparentOf(span),
        setAttribute: (key, value) => void span.setAttribute(key, value),
        updateName: (n) => void span.updateName(n),
        end(error?: unknown) {
          if (error !== undefined) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
            if (error instanceof Error) span.recordException(error);
          }
          span.end();
        },
        run: (fn) => active.run(context, fn),
      };
    },
    activeTraceparent() {
      const span = current();
      return span ? traceparentOf(span) : undefined;
    },
    logFields() {
      const span = current();
      if (!span) return undefined;
      const c = span.spanContext();
      return { trace_id: c.traceId, span_id: c.spanId };
    },
    shutdown: () => provider.shutdown(),
  };
}

/**
 * Spans exported in batches over OTLP/HTTP. The exporter reads the standard
 * variables (OTEL_EXPORTER_OTLP_ENDPOINT or _TRACES_ENDPOINT, _HEADERS,
 * _TIMEOUT), the provider the sampler (OTEL_TRACES_SAMPLER, _ARG), the batch
 * processor OTEL_BSP_*; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name
 * the service (default `hermod`).
 */
export async function createOtlpTracing(role: string, log: { warn(msg: string, fields?: Record<string, unknown>): void }): Promise<Tracing> {
  // The SDK tells of failed exports (a collector down or refusing) through its diagnostics: into hermod's log, as warnings.
  const warn = (message: string, ...args: unknown[]) =>
    log.warn('OpenTelemetry', { detail: [message, ...args.map((a) => (a instanceof Error ? a.message : a))] });
  const quiet = () => undefined;
  diag.setLogger({ error: warn, warn, info: quiet, debug: quiet, verbose: quiet }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  return createTracing({
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
    attributes: { 'hermod.role': role, 'service.instance.id': `${os.hostname()}:${process.pid}`, 'process.pid': process.pid },
  });
}
