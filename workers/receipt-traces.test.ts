import { afterEach, describe, expect, it } from 'vitest';
import { createTracing } from '../lib/otel-tracing';
import { installTracing } from '../lib/tracing';
import { createReceiptTraces } from './receipt-traces';

const trace = (n: number) => `00-${'ab'.repeat(16)}-${n.toString(16).padStart(16, '0')}-01`;

describe('traces of recent submits, for their receipts', () => {
  afterEach(() => installTracing(undefined));

  it('gives a receipt the trace of the submit with its carrier id, also for a second receipt of it, and keeps only the newest', () => {
    installTracing(createTracing({ spanProcessors: [] }));
    const traces = createReceiptTraces(3);
    traces.remember(['smsc-1', 'smsc-1b'], trace(1));
    traces.remember(['smsc-2'], trace(2));
    traces.remember(['smsc-3'], trace(3));
    expect(traces.take('smsc-1')).toBeUndefined();
    expect(traces.take('smsc-1b')).toBe(trace(1));
    expect(traces.take('smsc-1b')).toBe(trace(1));
    expect(traces.take('smsc-3')).toBe(trace(3));
    expect(traces.take('unknown')).toBeUndefined();
  });

  it('holds nothing while tracing is off', () => {
    const traces = createReceiptTraces();
    traces.remember(['smsc-1'], trace(1));
    expect(traces.take('smsc-1')).toBeUndefined();
  });
});
