import type { Metadata } from '@grpc/grpc-js';
import { tracesOfCall } from '../../lib/grpc-trace';
import { carryTrace, startSpan, tracingOn } from '../../lib/tracing';

/**
 * Runs a batched call's work with a server span per item that came with a
 * trace (each child of its caller's client span), each kept with its item so
 * the work after the call (the bus hand-off) continues that item's trace.
 */
export function withCallSpans<T>(method: string, metadata: Metadata, items: readonly object[], work: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return work();
  return withItemSpans(method, tracesOfCall(metadata, items.length), items, work);
}

/** The same, with each item's caller trace given in order (undefined for none): a streamed batch carries them in its message. */
export async function withItemSpans<T>(method: string, traces: readonly (string | undefined)[], items: readonly object[], work: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return work();
  const [service, name] = method.split('/') as [string, string];
  const spans = items.map((_, i) => {
    const parent = traces[i];
    if (!parent) return undefined;
    const span = startSpan(method, { kind: 'server', parent, attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': name } });
    carryTrace(items[i]!, span?.traceparent);
    return span;
  });
  try {
    // Log lines of the call name the first item's trace.
    const first = spans.find((s) => s);
    const result = first ? await first.run(work) : await work();
    for (const s of spans) s?.end();
    return result;
  } catch (err) {
    for (const s of spans) s?.end(err);
    throw err;
  }
}
