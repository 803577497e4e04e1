import { Metadata } from '@grpc/grpc-js';
import { traceOf, tracingOn } from './tracing';

const KEY = 'traceparent';
const NONE = '-';

/**
 * The traces of the items of one batched gRPC call (many messages in one
 * SendMessages) in its metadata: one `traceparent` per item, in order, `-`
 * for an item without one. A call of one item carries a plain W3C
 * `traceparent`. Undefined while tracing is off or when no item has a trace.
 */
export function traceMetadata(items: readonly object[]): Metadata | undefined {
  if (!tracingOn()) return undefined;
  const traces = items.map((i) => traceOf(i) ?? NONE);
  if (traces.every((t) => t === NONE)) return undefined;
  const metadata = new Metadata();
  metadata.set(KEY, traces.join(','));
  return metadata;
}

/** The traces a call's metadata carries for its `count` items (undefined for each while off, or when it carries none). */
export function tracesOfCall(metadata: Metadata | undefined, count: number): (string | undefined)[] {
  if (!tracingOn() || !metadata) return new Array(count).fill(undefined);
  // HTTP/2 may hand a comma-separated value over as several values: read them as one list either way.
  const traces = metadata
    .get(KEY)
    .flatMap((v) => String(v).split(','))
    .map((t) => t.trim());
  return Array.from({ length: count }, (_, i) => (traces[i] && traces[i] !== NONE ? traces[i] : undefined));
}
