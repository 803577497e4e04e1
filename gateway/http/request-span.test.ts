import http from 'node:http';
import Router from '@koa/router';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/log';
import { createTracing } from '../../lib/otel-tracing';
import { installTracing } from '../../lib/tracing';
import { requestSpan } from './request-span';

/** JSON lines written to stdout while `fn` runs. */
async function logLines(fn: () => Promise<void>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string) => lines.push(chunk) > 0) as typeof process.stdout.write;
  try {
    await fn();
  } finally {
    process.stdout.write = write;
  }
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'handling');
}

async function serve() {
  const app = new Koa();
  const router = new Router();
  router.post('/rest/sms/v2/messages/:id', (ctx) => {
    createLogger().info('handling', { id: ctx.params.id });
    ctx.status = 202;
  });
  app.use(requestSpan);
  app.use(router.routes());
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const request = (method: string, path: string, headers: Record<string, string> = {}) =>
    fetch(`http://localhost:${port}${path}`, { method, headers }).then((r) => r.status);
  return { request, close: () => new Promise((r) => server.close(r)) };
}

describe('request spans at the gateway', () => {
  afterEach(() => installTracing(undefined));

  it('continue the trace of a client that sends a traceparent, are named by route, and start a trace of their own for a malformed one', async () => {
    const exporter = new InMemorySpanExporter();
    installTracing(createTracing({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    const { request, close } = await serve();
    const logged = await logLines(async () => {
      try {
        const caller = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
        expect(await request('POST', '/rest/sms/v2/messages/kia-ora-%C4%81', { traceparent: caller })).toBe(202);
        expect(await request('POST', '/rest/sms/v2/messages/2', { traceparent: 'not a traceparent' })).toBe(202);
        expect(await request('GET', '/wp-admin/setup.php')).toBe(404);
      } finally {
        await close();
      }
    });
    const [continued, fresh, unknown] = exporter.getFinishedSpans();
    // The handler's log line names the request's trace and span.
    expect(logged[0]).toMatchObject({ id: 'kia-ora-ā', trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: continued!.spanContext().spanId });
    expect(continued!.name).toBe('POST /rest/sms/v2/messages/:id');
    expect(continued!.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(continued!.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(continued!.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/rest/sms/v2/messages/:id', 'http.response.status_code': 202 });
    expect(fresh!.parentSpanContext).toBeUndefined();
    expect(fresh!.spanContext().traceId).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(unknown!.name).toBe('GET');
    expect(unknown!.attributes['http.response.status_code']).toBe(404);
  });

  it('while tracing is off, leave the log lines of a request that came with a traceparent without trace ids', async () => {
    const { request, close } = await serve();
    const logged = await logLines(async () => {
      try {
        expect(await request('POST', '/rest/sms/v2/messages/1', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' })).toBe(202);
      } finally {
        await close();
      }
    });
    expect(logged).toHaveLength(1);
    expect(logged[0]).not.toHaveProperty('trace_id');
  });
});
