import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSmscSimulator, type SmscSimulator } from '../workers/simulators/smsc-simulator';
import { eventually } from './support/eventually';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { createClient, type Client } from './support/https-client';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from './support/redis-keys';
import { type RoleProcess, startRole } from './support/role-process';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Environment that makes a hermod process write every module it loads to `file` (test/support/record-imports.mjs). */
const recordImports = (file: string) => ({ NODE_OPTIONS: `--import=${path.join(ROOT, 'test/support/record-imports.mjs')}`, RECORD_IMPORTS_FILE: file });
const importsIn = (file: string): string[] => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

/** A span as an OTLP/HTTP JSON export carries it, with the role of the process that made it. */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  role: string;
  pid: string;
  attributes: Record<string, unknown>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };
const otlpValue = (v: OtlpValue): unknown => v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue;
const attributesOf = (list: OtlpAttribute[] = []): Record<string, unknown> => Object.fromEntries(list.map((a) => [a.key, otlpValue(a.value)]));

/** A small OTLP/HTTP receiver: decodes each JSON export to /v1/traces and keeps its spans. */
async function startOtlpReceiver() {
  const spans: ExportedSpan[] = [];
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          resource: { attributes: OtlpAttribute[] };
          scopeSpans: { spans: (Omit<ExportedSpan, 'role' | 'pid' | 'attributes'> & { attributes: OtlpAttribute[] })[] }[];
        }[];
      };
      for (const rs of body.resourceSpans) {
        const resource = attributesOf(rs.resource.attributes);
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans)
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind,
              role: String(resource['hermod.role']),
              pid: String(resource['process.pid']),
              attributes: attributesOf(s.attributes),
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    spans,
    paths,
    port: (server.address() as { port: number }).port,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

describe('traces of one message across the processes of a hermod on the Redis bus', () => {
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let simulator: SmscSimulator;
  let client: Client;
  const processes: RoleProcess[] = [];
  const callbacks: { status: string; traceparent: string }[] = [];
  let callbackReceiver: http.Server;
  const prefix = randomPrefix('traces');
  let importsFile = '';

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    callbackReceiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        callbacks.push({ status: JSON.parse(body).status, traceparent: String(req.headers.traceparent ?? '') });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => callbackReceiver.listen(0, '127.0.0.1', r));
    simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 20 });
    const { port: smscPort } = await simulator.start();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-traces-'));
    importsFile = path.join(dataDir, 'imports.txt');
    // Gateway, core and the SMS worker each a process of its own (as on separate machines), all exporting to the receiver.
    const env = {
      HERMOD_BUS: 'redis',
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_URL: REDIS_URL,
      HERMOD_REDIS_PREFIX: prefix,
      HERMOD_BUS_PARTITIONS: '4',
      HERMOD_DATA_DIR: dataDir,
      HERMOD_CORE_ADDRESS: '127.0.0.1:0',
      HERMOD_METRICS_PORT: '0',
      HERMOD_HOST: '127.0.0.1',
      HERMOD_SMPP_PORT: String(smscPort),
      HERMOD_BOOTSTRAP_APP: 'acme',
      HERMOD_BOOTSTRAP_PASSWORD: 'secret',
      HERMOD_CALLBACK_ALLOW_PRIVATE: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://localhost:${otlp.port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'hermod-traces-test',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      ...recordImports(importsFile),
    };
    const core = await startRole(['core'], env, '"msg":"core listening"');
    processes.push(core);
    processes.push(await startRole(['worker', '--channel', 'sms'], env, '"msg":"channel worker started"'));
    const gateway = await startRole(
      ['gateway'],
      { ...env, HERMOD_CORE_ADDRESS: core.ready.grpc, HERMOD_HTTPS_PORT: '0', HERMOD_HTTP_PORT: '0' },
      '"msg":"gateway listening"',
    );
    processes.push(gateway);
    client = createClient(gateway.ready.https, fs.readFileSync(path.join(dataDir, 'tls/self-signed.crt'), 'utf8'), { user: 'acme', pass: 'secret' });
    const port = (callbackReceiver.address() as { port: number }).port;
    await promisify(execFile)(
      process.execPath,
      [path.join(ROOT, 'bin/hermod.js'), 'apps', 'set-callbacks', 'acme', '--status', `http://localhost:${port}/status`],
      {
        cwd: ROOT,
        env: { ...process.env, HERMOD_CORE_ADDRESS: core.ready.grpc },
      },
    );
  }, 300_000);

  afterAll(async () => {
    client?.close();
    await Promise.all(processes.map((p) => p.stop().catch(() => undefined)));
    await simulator?.stop();
    callbackReceiver?.close();
    await otlp?.close();
    await deleteRedisKeys(prefix);
  });

  it('joins the request, the gRPC call, core, the bus, the SMS worker, its submit and receipt and the status callbacks in one trace, each span under its cause', async () => {
    const sent = await client.post('/rest/sms/v2/messages', { destination: '+6427000001', content: 'Kia ora, e hoa mā — tēnā koe 👋🏽' });
    expect(sent.status).toBe(202);
    const id = sent.json.id as string;
    await eventually(async () => (callbacks.some((c) => c.status === 'received') ? true : undefined), 60_000);

    // The request's span is the root; its trace is the message's.
    const root = await eventually(async () => otlp.spans.find((s) => s.name === 'POST /rest/sms/v2/messages' && !s.parentSpanId), 30_000);
    const traceId = root.traceId;
    const expected = [
      ['gateway', 'hermod.v1.Messaging/SendMessageStream', 3], // client
      ['core', 'hermod.v1.Messaging/SendMessageStream', 2], // server
      ['core', 'send hermod.sms.v1', 4],
      ['worker-sms', 'process hermod.sms.v1', 5],
      ['worker-sms', 'submit smpp', 3],
      ['worker-sms', 'receipt smpp', 5],
      ['core', 'process hermod.status.v1', 5],
      ['core', 'callback status', 3],
    ] as const;
    const inTrace = (): ExportedSpan[] => otlp.spans.filter((s) => s.traceId === traceId);
    // Every span named above, and the callback of the delivery (its span ends once the receiver answered, then goes out in the next batch).
    const complete = (): boolean => {
      const all = inTrace();
      const receipt = all.find((s) => s.name === 'process hermod.status.v1' && s.attributes['hermod.status'] === 'received');
      return (
        expected.every(([role, name, kind]) => all.some((s) => s.role === role && s.name === name && s.kind === kind)) &&
        receipt !== undefined &&
        all.some((s) => s.name === 'callback status' && s.parentSpanId === receipt.spanId)
      );
    };
    // A timeout here still lets the checks below say which span is missing.
    await eventually(() => complete(), 30_000).catch(() => undefined);
    const spans = inTrace();
    const found = (role: string, name: string, kind: number): ExportedSpan => {
      const span = spans.find((s) => s.role === role && s.name === name && s.kind === kind);
      expect(span, `${name} (kind ${kind}) from ${role}; the trace has ${spans.map((s) => `${s.role}:${s.name}`).join(', ')}`).toBeDefined();
      return span!;
    };
    // SpanKind in OTLP: 2 server, 3 client, 4 producer, 5 consumer.
    expect(root.role).toBe('gateway');
    expect(root.kind).toBe(2);
    const call = found('gateway', 'hermod.v1.Messaging/SendMessageStream', 3);
    const server = found('core', 'hermod.v1.Messaging/SendMessageStream', 2);
    const publish = found('core', 'send hermod.sms.v1', 4);
    const job = found('worker-sms', 'process hermod.sms.v1', 5);
    const submit = found('worker-sms', 'submit smpp', 3);
    const receipt = found('worker-sms', 'receipt smpp', 5);
    expect(call.parentSpanId).toBe(root.spanId);
    expect(server.parentSpanId).toBe(call.spanId);
    expect(publish.parentSpanId).toBe(server.spanId);
    expect(job.parentSpanId).toBe(publish.spanId);
    expect(job.attributes['hermod.message_id']).toBe(id);
    expect(submit.parentSpanId).toBe(job.spanId);
    expect(receipt.parentSpanId).toBe(submit.spanId);
    // Core takes each status the worker reported, as a child of the span that reported it.
    const statusSpans = spans.filter((s) => s.name === 'process hermod.status.v1');
    expect(statusSpans.map((s) => s.role)).toContain('core');
    const received = statusSpans.find((s) => s.attributes['hermod.status'] === 'received');
    expect(received?.parentSpanId).toBe(receipt.spanId);
    const submitted = statusSpans.find((s) => s.attributes['hermod.status'] === 'submitted');
    expect(submitted?.parentSpanId).toBe(job.spanId);
    // The callback of the delivery, a child of core's handling of the receipt, tells the receiver the trace.
    const callbackSpans = spans.filter((s) => s.name === 'callback status');
    expect(callbackSpans.some((s) => s.parentSpanId === received!.spanId)).toBe(true);
    const delivered = callbacks.find((c) => c.status === 'received')!;
    expect(delivered.traceparent.split('-')[1]).toBe(traceId);
    expect(callbackSpans.map((s) => s.spanId)).toContain(delivered.traceparent.split('-')[2]);
    // Three processes of their own made them.
    expect(new Set(spans.map((s) => s.pid)).size).toBe(3);
    // Every span but the root hangs off another span of the trace.
    const ids = new Set(spans.map((s) => s.spanId));
    for (const s of spans) if (s !== root) expect(ids.has(s.parentSpanId), `parent of ${s.role}:${s.name}`).toBe(true);
    expect(otlp.paths[0]).toMatch(/^POST \/v1\/traces application\/json/);
    // The SDK was loaded, as the module record shows (the check of the test below, that tracing off loads none, can see it).
    expect(importsIn(importsFile).filter((l) => l.includes('@opentelemetry/sdk-trace-base')).length).toBeGreaterThan(0);
  }, 180_000);
});

describe('traces while no OTLP endpoint is set', () => {
  let running: HermodProcess | undefined;
  afterAll(async () => {
    await running?.stop();
  });

  it('loads no OpenTelemetry module in any process and writes no trace ids into the logs, while a message goes all the way to the carrier', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-traces-off-'));
    const importsFile = path.join(dataDir, 'imports.txt');
    const env: Record<string, string> = { ...recordImports(importsFile), OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' };
    running = await startHermod({ dataDir, env });
    const client = createClient(running.baseUrl, running.ca(), { user: 'acme', pass: 'secret' });
    try {
      const sent = await client.post('/rest/sms/v2/messages', { destination: '+6427000002', content: '你好，世界 — kia ora 👋🏽', reference: 'off-1' });
      expect(sent.status).toBe(202);
      await eventually(async () => ((await client.get(`/rest/sms/v2/messages?id=${sent.json.id}`)).json?.status === 'received' ? true : undefined), 60_000);
    } finally {
      client.close();
    }
    const imports = importsIn(importsFile);
    // The record saw the processes load hermod (several of them: supervisor, gateway, core)...
    expect(imports.some((l) => /\/dist\/[0-9a-f]{16}\/hermod\.js$/.test(l))).toBe(true);
    expect(new Set(imports.map((l) => l.split(' ')[0])).size).toBeGreaterThan(2);
    // ...and none of them loaded OpenTelemetry.
    expect(imports.filter((l) => l.includes('@opentelemetry') || l.includes('otel-tracing'))).toEqual([]);
    expect(running.output()).not.toContain('trace_id');
  }, 240_000);
});
