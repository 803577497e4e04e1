import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../test/support/eventually';
import { createOtlpTracing } from './otel-tracing';
import { startSpan, startTracing } from './tracing';

describe('OTLP export', () => {
  const saved = { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, delay: process.env.OTEL_BSP_SCHEDULE_DELAY };
  afterEach(() => {
    if (saved.endpoint === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved.endpoint;
    if (saved.delay === undefined) delete process.env.OTEL_BSP_SCHEDULE_DELAY;
    else process.env.OTEL_BSP_SCHEDULE_DELAY = saved.delay;
  });

  it('says in the log, as a warning, when the collector cannot be reached, and still stops', async () => {
    // A port that was free a moment ago: nothing listens there.
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise((r) => server.close(r));
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://localhost:${port}`;
    process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
    const warnings: { msg: string; fields?: Record<string, unknown> }[] = [];
    const tracing = await createOtlpTracing('core', { warn: (msg, fields) => warnings.push({ msg, fields }) });
    tracing.startSpan('send hermod.sms.v1', { kind: 'producer', parent: null }).end();
    // The batch goes out after OTEL_BSP_SCHEDULE_DELAY; its failure (after the exporter's own retries) is told.
    const told = await eventually(() => warnings.find((w) => JSON.stringify(w.fields).includes('ECONNREFUSED')), 25_000);
    expect(told.msg).toBe('OpenTelemetry');
    // Stopping does not hang on the unreachable collector (what it could not flush, startTracing's stop logs).
    await tracing.shutdown().catch(() => undefined);
  }, 30_000);

  it('stops within about 2 s when the collector takes the spans and never answers, saying it stopped without them', async () => {
    const server = http.createServer(() => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const endpoint = `http://localhost:${(server.address() as net.AddressInfo).port}`;
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    const warnings: string[] = [];
    const log = { info: () => undefined, warn: (msg: string) => void warnings.push(msg) };
    try {
      const tracing = await startTracing({ enabled: true, endpoint, protocol: '' }, 'gateway', log);
      startSpan('POST /rest/sms/v2/messages', { kind: 'server', parent: null })!.end();
      const started = Date.now();
      await tracing.stop();
      expect(Date.now() - started).toBeLessThan(5000);
      expect(warnings).toContain('traces not flushed within 2 s; stopping without them');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  }, 30_000);
});
