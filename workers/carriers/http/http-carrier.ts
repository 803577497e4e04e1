import type { OutboundJob } from '../../../core/ports/bus-payloads';
import type { Carrier, Handover } from '../../carrier';

/**
 * A carrier behind an HTTP API whose delivery reports come as webhooks to the
 * gateway: sending is all it does, so it is always ready, never emits reports
 * or inbound messages itself, and holds nothing to close.
 */
export function createHttpCarrier(name: string, send: (job: OutboundJob, handover?: Handover) => Promise<{ carrierIds: string[] }>): Carrier {
  return {
    name,
    send: (job, _onWritten, handover) => send(job, handover),
    ready: async () => undefined,
    onReport: () => undefined,
    onInbound: () => undefined,
    close: async () => undefined,
  };
}
