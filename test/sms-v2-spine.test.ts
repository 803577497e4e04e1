import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prometheusTool } from './support/prometheus-process';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { eventually } from './support/eventually';
import { seriesSum } from './support/metric-samples';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KIA_ORA = 'Kia ora, e hoa mā — tēnā koe 👋🏽🎉';

describe('hermod start: an SMS through SMS Gateway v2 to the SMSC simulator and back', () => {
  let hermod: HermodProcess;
  let client: Client;
  let anonymous: Client;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-spine-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_SMSC_RECEIPT_DELAY: '50ms', HERMOD_GATEWAYS: '2' } });
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    anonymous = createClient(hermod.baseUrl, hermod.ca());
  });

  afterAll(async () => {
    client?.close();
    anonymous?.close();
    if (hermod) expect(await hermod.stop()).toBe(0);
  });

  it('accepts a message with 202 and the accepted status, then shows it received once the simulator reports delivery', async () => {
    const sent = await client.post('/rest/sms/v2/messages', { destination: '+6421000001', content: KIA_ORA, reference: 'Привет-1' });
    expect(sent.status).toBe(202);
    expect(sent.json).toEqual({ id: expect.stringMatching(UUID), status: 'accepted', detail: '+6421000001' });

    const details = await eventually(async () => {
      const r = await client.get(`/rest/sms/v2/messages?id=${sent.json.id}`);
      return r.json?.status === 'received' ? r : undefined;
    });
    expect(details.status).toBe(200);
    expect(details.json).toMatchObject({
      id: sent.json.id,
      destination: '+6421000001',
      content: KIA_ORA,
      reference: 'Привет-1',
      direction: 'MT',
      status: 'received',
    });
  });

  it('holds a scheduled message as queued until its time, then sends it', async () => {
    const at = Date.now() + 2500;
    const scheduled = new Date(at).toISOString();
    const sent = await client.post('/rest/sms/v2/messages', { destination: '+6421000002', content: '你好世界, later', scheduled });
    expect(sent.status).toBe(202);
    await new Promise((r) => setTimeout(r, 500));
    const before = await client.get(`/rest/sms/v2/messages?id=${sent.json.id}`);
    // An answer that came before the message's time must say queued (on a machine loaded enough, the answer may come after it).
    if (Date.now() < at) expect(before.json.status).toBe('queued');
    else expect(['queued', 'sent', 'submitted', 'received']).toContain(before.json.status);
    const done = await eventually(async () => {
      const r = await client.get(`/rest/sms/v2/messages?id=${sent.json.id}`);
      return r.json?.status === 'received' ? r : undefined;
    });
    expect(done.json.status).toBe('received');
  });

  it('refuses a schedule in the past or more than 60 days ahead', async () => {
    const past = await client.post('/rest/sms/v2/messages', { destination: '+6421000002', content: 'Привет', scheduled: '2020-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
    expect(past.json.message).toContain('past');
    const far = await client.post('/rest/sms/v2/messages', {
      destination: '+6421000002',
      content: 'Привет',
      scheduled: new Date(Date.now() + 61 * 86_400_000).toISOString(),
    });
    expect(far.status).toBe(400);
    expect(far.json.message).toContain('60 days');
  });

  it('redirects plain HTTP to the same path over HTTPS', async () => {
    // By host name: the redirect keeps the host the client asked for.
    const r = await createClient(`http://localhost:${hermod.httpPort}`).post('/rest/sms/v2/messages?x=1', { destination: '+6421000001', content: KIA_ORA });
    expect(r.status).toBe(308);
    expect(r.headers.location).toBe(`https://localhost:${hermod.httpsPort}/rest/sms/v2/messages?x=1`);
  });

  it('answers 401 in the v2 error shape without credentials and with a wrong password', async () => {
    const missing = await anonymous.post('/rest/sms/v2/messages', { destination: '+6421000001', content: KIA_ORA });
    expect(missing.status).toBe(401);
    expect(missing.json).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String) });

    const wrong = await createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'nope' }).post('/rest/sms/v2/messages', {
      destination: '+6421000001',
      content: KIA_ORA,
    });
    expect(wrong.status).toBe(401);
    expect(wrong.json).toMatchObject({ statusCode: 401, error: 'Unauthorized' });

    const unknownApp = await createClient(hermod.baseUrl, hermod.ca(), { user: 'nobody', pass: 'secret' }).get(
      '/rest/sms/v2/messages?id=00000000-0000-4000-8000-000000000000',
    );
    expect(unknownApp.status).toBe(401);
  });

  it('rejects malformed JSON and a missing field with 400 in the v2 error shape', async () => {
    const malformed = await client.request('POST', '/rest/sms/v2/messages', {
      raw: '{"destination": "+6421000001", "content": "Kia ora, e hoa mā",',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.json).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringContaining('JSON') });

    // A name given twice: JSON.parse would keep the second and send to that handset, the first silently dropped.
    const twice = await client.request('POST', '/rest/sms/v2/messages', {
      raw: '{"destination":"+6421000001","content":"Kia ora, e hoa mā 👋🏽","destination":"+6421000002"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(twice.status).toBe(400);
    expect(twice.json).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'request body names "destination" twice in one object: give each field once',
    });

    const missing = await client.post('/rest/sms/v2/messages', { destination: '+6421000001' });
    expect(missing.status).toBe(400);
    expect(missing.json).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringContaining('content') });

    const notANumber = await client.post('/rest/sms/v2/messages', { destination: 'Привет', content: KIA_ORA });
    expect(notANumber.status).toBe(400);
    expect(notANumber.json.message).toContain('destination');
  });

  it('answers 404 in the v2 error shape for an unknown message id', async () => {
    const r = await client.get('/rest/sms/v2/messages?id=00000000-0000-4000-8000-000000000000');
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ statusCode: 404, error: 'Not Found', message: expect.any(String) });
  });

  it('refuses an id given more than once with 400 in the v2 error shape, saying that rather than that it is missing', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const second of [id, encodeURIComponent('你好 👋🏽')]) {
      const r = await client.get(`/rest/sms/v2/messages?id=${id}&id=${second}`);
      expect(r.status, r.text).toBe(400);
      expect(r.json).toEqual({ statusCode: 400, error: 'Bad Request', message: 'query parameter id is given more than once; give it once' });
    }
  });

  it('serves its OpenAPI document without credentials', async () => {
    const r = await anonymous.get('/rest/sms/v2/openapi.yaml');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toContain('yaml');
    expect(r.text).toContain('SingleMessage');
    expect(r.text).toContain('/messages');
  });

  it('exposes request, gRPC, status and SMPP window metrics for Prometheus', async () => {
    const r = await createClient(`http://127.0.0.1:${hermod.metricsPort}`).get('/metrics');
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/hermod_http_requests_total\{[^}]*route="\/rest\/sms\/v2\/messages"[^}]*status="202"[^}]*\} [1-9]/);
    expect(r.text).toMatch(/hermod_http_request_duration_seconds_bucket/);
    expect(r.text).toMatch(/hermod_grpc_call_duration_seconds_bucket\{[^}]*method="SendMessageStream"/);
    // A call core answered with an error is labelled by the name of its code, as a successful one is by OK.
    expect((await client.get('/rest/sms/v2/messages?id=00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const codes = new Set(
      [
        ...(await createClient(`http://127.0.0.1:${hermod.metricsPort}`).get('/metrics')).text.matchAll(
          /hermod_grpc_call_duration_seconds_count\{[^}]*code="([^"]*)"/g,
        ),
      ].map((m) => m[1]),
    );
    expect(codes).toContain('NOT_FOUND');
    for (const code of codes) expect(code).toMatch(/^[A-Z_]+$/);
    // What a Prometheus operator lints a target with (Debian's promtool, where installed).
    if (prometheusTool('promtool').available) {
      const scrape = (await createClient(`http://127.0.0.1:${hermod.metricsPort}`).get('/metrics')).text;
      const lint = spawnSync('promtool', ['check', 'metrics'], { input: scrape, encoding: 'utf8' });
      expect(`${lint.stdout}${lint.stderr}`).toBe('');
      expect(lint.status).toBe(0);
    }
    expect(seriesSum(r.text, 'hermod_core_messages_total{channel="sms",status="received"}')).toBeGreaterThanOrEqual(1);
    expect(r.text).toMatch(/hermod_smpp_window_in_use/);
    expect(seriesSum(r.text, 'hermod_bus_lag_records{topic="hermod.sms.v1",group="sms-workers"}')).toBeGreaterThanOrEqual(0);
  });
});
