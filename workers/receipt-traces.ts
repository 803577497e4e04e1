import { tracingOn } from '../lib/tracing';
import { FifoMap } from '../lib/fifo-map';

/**
 * The traces of recent submits by carrier id, so the delivery receipt that
 * comes back later on a bind of this worker joins its message's trace. Held
 * only while tracing is on, and at most `max` of them (the oldest go first): a
 * receipt that outlives its entry, or that reaches another worker, starts a
 * trace of its own that still names the carrier id.
 */
export interface ReceiptTraces {
  remember(carrierIds: readonly string[], trace: string | undefined): void;
  take(carrierId: string): string | undefined;
}

export function createReceiptTraces(max = 10_000): ReceiptTraces {
  const traces = new FifoMap<string, string>();
  return {
    remember(carrierIds, trace) {
      if (!trace || !tracingOn()) return;
      for (const id of carrierIds) {
        traces.delete(id);
        traces.set(id, trace);
      }
      // A Map iterates in insertion order: the first key is the oldest.
      while (traces.size > max) traces.shift();
    },
    take(carrierId) {
      const trace = traces.get(carrierId);
      // Kept after an intermediate receipt (ENROUTE, ACCEPTD): the final one may follow.
      return trace;
    },
  };
}
