import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../test/support/eventually';
import { createTracing } from '../../lib/otel-tracing';
import { carryTrace, installTracing, startSpan } from '../../lib/tracing';
import type { Bus, DeliveredRecord } from '../ports/bus';
import { decodeJob, decodeStatus, encodeJob, encodeStatus } from '../ports/bus-payloads';
import { processSpan, publishSpans } from '../ports/bus-spans';
import type { BusFactory, BusContractOptions } from './bus-contract';
import { unique } from './contract-support';

/**
 * A message's trace crosses the bus inside the record's payload: whatever
 * the adapter, the span that takes a job is the child of the span that
 * published it, and the status reported back is the child of the span that
 * reported it. Call beside describeBusContract with the same factory.
 */
export function describeBusTraceContract(name: string, factory: BusFactory, options: BusContractOptions = {}): void {
  const timeoutMs = options.timeoutMs ?? 10_000;

  describe(`Bus trace contract: ${name}`, () => {
    let bus: Bus | undefined;
    afterEach(async () => {
      installTracing(undefined);
      await bus?.close();
    });

    it(
      'carries the trace of a job and of its status from the publishing span to the span that takes the record',
      async () => {
        const exporter = new InMemorySpanExporter();
        installTracing(createTracing({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
        bus = await factory();
        const jobs = unique('trace-jobs');
        const statuses = unique('trace-statuses');
        const taken: DeliveredRecord[] = [];
        const reported: DeliveredRecord[] = [];
        await bus.subscribe(jobs, async (records) => void taken.push(...records), { group: unique('workers') });
        await bus.subscribe(statuses, async (records) => void reported.push(...records), { group: unique('core') });
        await new Promise((r) => setTimeout(r, options.settleMs ?? 0));

        const request = startSpan('POST /rest/sms/v2/messages', { kind: 'server' })!;
        const message = { id: 'm-1' };
        carryTrace(message, request.traceparent);
        const publish = publishSpans(jobs, [message]);
        const content = 'Kia ora, e hoa mā — tēnā koe 👋🏽 你好';
        await bus.publish(jobs, [
          {
            key: '+6421000001',
            value: encodeJob({
              id: 'm-1',
              applicationId: 'acme',
              channel: 'sms',
              destination: '+6421000001',
              source: 'hermod',
              content,
              acceptedAt: 1,
              trace: publish.traces[0],
            }),
          },
        ]);
        publish.end();
        request.end();

        const [record] = await eventually(() => (taken.length > 0 ? taken : undefined), timeoutMs);
        const job = decodeJob(record!.value);
        expect(job.content).toBe(content);
        const worker = processSpan(jobs, job.trace)!;
        await bus.publish(statuses, [
          { key: job.id, value: encodeStatus({ id: job.id, status: 'submitted', at: 2, channel: 'sms', trace: worker.traceparent }) },
        ]);
        worker.end();
        const [statusRecord] = await eventually(() => (reported.length > 0 ? reported : undefined), timeoutMs);
        processSpan(statuses, decodeStatus(statusRecord!.value).trace)!.end();

        const spans = exporter.getFinishedSpans();
        const named = (n: string) => spans.find((s) => s.name === n)!;
        expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
        expect(named(`send ${jobs}`).parentSpanContext?.spanId).toBe(named('POST /rest/sms/v2/messages').spanContext().spanId);
        expect(named(`process ${jobs}`).parentSpanContext?.spanId).toBe(named(`send ${jobs}`).spanContext().spanId);
        expect(named(`process ${statuses}`).parentSpanContext?.spanId).toBe(named(`process ${jobs}`).spanContext().spanId);
      },
      timeoutMs * 3,
    );
  });
}
