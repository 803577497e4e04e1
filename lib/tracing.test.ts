import type { IncomingHttpHeaders } from 'node:http';
import { Metadata } from '@grpc/grpc-js';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { callbackSpan } from '../core/callbacks/callback-span';
import { withCallSpans, withItemSpans } from '../core/grpc/call-spans';
import { SendBatch } from '../proto/gen/hermod/v1/messages';
import { processSpan, publishSpans } from '../core/ports/bus-spans';
import { decodeJob, decodeStatus, encodeJob, encodeStatus, type OutboundJob } from '../core/ports/bus-payloads';
import { tracedSend } from '../gateway/traced-send';
import { traceMetadata, tracesOfCall } from './grpc-trace';
import { createLogger } from './log';
import { createTracing } from './otel-tracing';
import { activeTraceparent, carryTrace, inSpan, installTracing, startSpan, traceOf } from './tracing';

const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/;

function inMemoryTracing() {
  const exporter = new InMemorySpanExporter();
  const tracing = createTracing({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracing };
}

/** The metadata as the server reads it after HTTP/2 carried it. */
const overTheWire = (metadata: Metadata | undefined): Metadata | undefined =>
  metadata && Metadata.fromHttp2Headers(metadata.toHttp2Headers() as IncomingHttpHeaders);

const job = (id: string, trace?: string): OutboundJob => ({
  id,
  applicationId: 'acme',
  channel: 'sms',
  destination: '+6421000001',
  source: 'hermod',
  content: 'Kia ora, e hoa mā — tēnā koe 👋🏽',
  acceptedAt: 1_700_000_000_000,
  trace,
});

/** One message's way from a gateway request to its callback, through the helpers each hop calls. */
async function oneMessage(): Promise<void> {
  const request = startSpan('POST /rest/sms/v2/messages', { kind: 'server' });
  const message = { destination: '+6421000001', content: '你好 👋🏽' };
  const send = async (messages: object[]) => {
    // The batch on the SendMessageStream carries each message's trace beside it, through protobuf.
    const wire = SendBatch.decode(SendBatch.encode({ batch: 1, messages: [], traceparents: messages.map((m) => traceOf(m) ?? '') }).finish());
    const records = messages.map(() => ({ id: 'm-1' }));
    await withItemSpans(
      'hermod.v1.Messaging/SendMessageStream',
      wire.traceparents.map((t) => t || undefined),
      messages,
      async () => {
        for (const [i, m] of messages.entries()) carryTrace(records[i]!, traceOf(m));
      },
    );
    const spans = publishSpans('hermod.sms.v1', records);
    const value = encodeJob(job('m-1', spans.traces[0]));
    spans.end();
    return value;
  };
  const run = () => tracedSend(message, (m) => send([m]));
  const value = request ? await request.run(run) : await run();
  request?.end();

  // The worker, in another process: the job's payload is all it has.
  const received = decodeJob(value);
  const worker = processSpan('hermod.sms.v1', received.trace);
  const reportStatus = async () => encodeStatus({ id: received.id, status: 'submitted', at: 1, channel: 'sms', trace: activeTraceparent() });
  const status = await (worker ? worker.run(() => inSpan('submit smpp', { kind: 'client' }, reportStatus)) : reportStatus());
  worker?.end();

  // Core takes the status; its change makes a callback job that carries the trace.
  const update = decodeStatus(status);
  const core = processSpan('hermod.status.v1', update.trace);
  core?.end();
  await callbackSpan(
    { eventId: 'e', applicationId: 'acme', kind: 'status', messageId: 'm-1', body: {}, createdAt: 1, attempt: 0, notBefore: 0, trace: core?.traceparent },
    async () => undefined,
  );
}

describe('traces', () => {
  afterEach(() => installTracing(undefined));

  it('while off, a message going through every hop makes no span and writes no trace into bus records', async () => {
    const { exporter, tracing } = inMemoryTracing();
    // Made but not installed: the hot path must not reach it.
    void tracing;
    await oneMessage();
    expect(exporter.getFinishedSpans()).toEqual([]);
    expect(JSON.parse(encodeJob(job('m-2', activeTraceparent())).toString())).not.toHaveProperty('trace');
    expect(traceMetadata([{}])).toBeUndefined();
    expect(startSpan('x', { kind: 'internal' })).toBeUndefined();
    const item = {};
    carryTrace(item, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(traceOf(item)).toBeUndefined();
  });

  it('while on, one trace joins the request, the gRPC call, the bus hand-off, the worker, the status and the callback, each the child of the one before', async () => {
    const { exporter, tracing } = inMemoryTracing();
    installTracing(tracing);
    await oneMessage();
    const spans = exporter.getFinishedSpans();
    const byName = (name: string): ReadableSpan => {
      const span = spans.find((s) => s.name === name);
      expect(span, `a span named ${name}`).toBeDefined();
      return span!;
    };
    const chain = [
      'POST /rest/sms/v2/messages',
      'hermod.v1.Messaging/SendMessageStream',
      'hermod.v1.Messaging/SendMessageStream',
      'send hermod.sms.v1',
      'process hermod.sms.v1',
      'submit smpp',
      'process hermod.status.v1',
      'callback status',
    ];
    expect(spans).toHaveLength(chain.length);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const root = byName('POST /rest/sms/v2/messages');
    expect(root.parentSpanContext).toBeUndefined();
    const [server, client] = spans.filter((s) => s.name === 'hermod.v1.Messaging/SendMessageStream').sort((a, b) => a.kind - b.kind);
    // SpanKind: SERVER 1, CLIENT 2.
    expect(server!.kind).toBe(1);
    expect(client!.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    expect(server!.parentSpanContext?.spanId).toBe(client!.spanContext().spanId);
    const parentOf = (name: string) => byName(name).parentSpanContext?.spanId;
    expect(parentOf('send hermod.sms.v1')).toBe(server!.spanContext().spanId);
    expect(parentOf('process hermod.sms.v1')).toBe(byName('send hermod.sms.v1').spanContext().spanId);
    expect(parentOf('submit smpp')).toBe(byName('process hermod.sms.v1').spanContext().spanId);
    expect(parentOf('process hermod.status.v1')).toBe(byName('submit smpp').spanContext().spanId);
    expect(parentOf('callback status')).toBe(byName('process hermod.status.v1').spanContext().spanId);
  });

  it("a unary SendMessages call, which core still serves, makes each server span the child of its message's client span through the metadata", async () => {
    const { exporter, tracing } = inMemoryTracing();
    installTracing(tracing);
    const messages = [{ content: 'Kia ora 👋🏽' }, { content: '测试' }];
    const clients = messages.map((m) => {
      const span = startSpan('client', { kind: 'client' })!;
      carryTrace(m, span.traceparent);
      return span;
    });
    const metadata = overTheWire(traceMetadata(messages));
    await withCallSpans('hermod.v1.Messaging/SendMessages', metadata ?? new Metadata(), messages, async () => undefined);
    for (const c of clients) c.end();
    const servers = exporter.getFinishedSpans().filter((s) => s.name === 'hermod.v1.Messaging/SendMessages');
    expect(servers.map((s) => s.parentSpanContext?.spanId).sort()).toEqual(clients.map((c) => c.traceparent.split('-')[2]).sort());
  });

  it('names the trace and span in a JSON log line written while a span is active, and in none outside', async () => {
    const { tracing } = inMemoryTracing();
    installTracing(tracing);
    const lines: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => lines.push(chunk) > 0) as typeof process.stdout.write;
    const span = startSpan('work', { kind: 'internal' })!;
    try {
      const log = createLogger({ role: 'core' });
      span.run(() => log.info('Kia ora, e hoa mā — tēnā koe'));
      log.info('outside');
    } finally {
      process.stdout.write = write;
      span.end();
    }
    const [inside, outside] = lines.map((l) => JSON.parse(l));
    const [, traceId, spanId] = span.traceparent.split('-');
    expect(inside).toMatchObject({ msg: 'Kia ora, e hoa mā — tēnā koe', trace_id: traceId, span_id: spanId, role: 'core' });
    expect(outside).not.toHaveProperty('trace_id');
  });

  it('work that runs later from the context of an ended span (a socket or timer made inside it) is in no trace, and a span with a null parent starts its own', async () => {
    const { exporter, tracing } = inMemoryTracing();
    installTracing(tracing);
    const request = startSpan('POST /rest/sms/v2/messages', { kind: 'server' })!;
    const later = request.run(() => new Promise<string | undefined>((resolve) => setTimeout(() => resolve(activeTraceparent()), 20)));
    const insideNow = request.run(() => activeTraceparent());
    request.end();
    expect(insideNow).toBe(request.traceparent);
    expect(await later).toBeUndefined();
    const receipt = request.run(() => startSpan('receipt smpp', { kind: 'consumer', parent: null })!);
    receipt.end();
    const [, requestTrace] = request.traceparent.split('-');
    expect(receipt.traceparent.split('-')[1]).not.toBe(requestTrace);
    expect(exporter.getFinishedSpans().find((s) => s.name === 'receipt smpp')!.parentSpanContext).toBeUndefined();
  });

  it('a job or status of an older build, or one refused by a tracing-less reader, carries no trace, and a malformed trace starts a new one', () => {
    const { exporter, tracing } = inMemoryTracing();
    installTracing(tracing);
    expect(decodeJob(encodeJob(job('m-3'))).trace).toBeUndefined();
    const span = processSpan('hermod.sms.v1', 'not-a-traceparent')!;
    span.end();
    expect(span.traceparent).toMatch(TRACEPARENT);
    expect(exporter.getFinishedSpans()[0]!.parentSpanContext).toBeUndefined();
  });

  it('property: the traces of any batch of messages reach the server in order, whatever carries none', () => {
    const { tracing } = inMemoryTracing();
    installTracing(tracing);
    const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
    const traceparent = fc.tuple(hex(32), hex(16), fc.constantFrom('00', '01')).map(([t, s, f]) => `00-${t}-${s}-${f}`);
    fc.assert(
      fc.property(fc.array(fc.option(traceparent, { nil: undefined }), { minLength: 1, maxLength: 40 }), (traces) => {
        const items = traces.map((t) => {
          const item = {};
          carryTrace(item, t);
          return item;
        });
        const metadata = overTheWire(traceMetadata(items));
        const expected = traces.every((t) => t === undefined) ? traces.map(() => undefined) : traces;
        expect(tracesOfCall(metadata, items.length)).toEqual(expected);
      }),
    );
  });
});
