import { startSpan, type TraceSpan, traceOf, tracingOn } from '../../lib/tracing';

/**
 * Spans around the bus, the trace of each record riding in its payload
 * (`trace`, a W3C traceparent) so it crosses every bus the same way: the
 * in-process one, Redis streams and Kafka.
 */
export interface PublishSpans {
  /** The trace to write into each item's record (undefined: none). */
  traces: (string | undefined)[];
  end(error?: unknown): void;
}

const NO_SPANS: PublishSpans = { traces: [], end: () => undefined };

/** A producer span per item that carries a trace (`send <topic>`), ended once the publish settles. */
export function publishSpans(topic: string, items: readonly object[]): PublishSpans {
  if (!tracingOn()) return NO_SPANS;
  const spans: (TraceSpan | undefined)[] = items.map((item) => {
    const parent = traceOf(item);
    return parent
      ? startSpan(`send ${topic}`, { kind: 'producer', parent, attributes: { 'messaging.destination.name': topic, 'messaging.operation.type': 'send' } })
      : undefined;
  });
  return {
    traces: spans.map((s) => s?.traceparent),
    end: (error) => {
      for (const s of spans) s?.end(error);
    },
  };
}

/** A consumer span (`process <topic>`) for a record that carried a trace; undefined while off or when it carried none. */
export function processSpan(topic: string, trace: string | undefined, attributes: Record<string, string> = {}): TraceSpan | undefined {
  if (!trace) return undefined;
  return startSpan(`process ${topic}`, {
    kind: 'consumer',
    parent: trace,
    attributes: { 'messaging.destination.name': topic, 'messaging.operation.type': 'process', ...attributes },
  });
}
