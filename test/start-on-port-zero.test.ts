import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { createClient, type Client } from './support/https-client';
import { seriesSum } from './support/metric-samples';

/** The JSON log lines with message `msg`. */
const logged = (hermod: HermodProcess, msg: string): Record<string, any>[] =>
  hermod
    .output()
    .split('\n')
    .filter((l) => l.includes(`"msg":${JSON.stringify(msg)}`))
    .map((l) => JSON.parse(l));

const portOf = (url: string): number => Number(new URL(url.replace(/^smpp:/, 'http:')).port);

describe('hermod start with every port 0', () => {
  let hermod: HermodProcess;
  let client: Client;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-port-zero-'));
    // startHermod asks for port 0 for HTTPS, HTTP, metrics, core's gRPC and the SMSC simulator; the channel simulators too here.
    hermod = await startHermod({
      dataDir,
      env: {
        HERMOD_GATEWAYS: '2',
        HERMOD_CHANNEL_SIMULATORS: 'true',
        HERMOD_SMTP_SINK_PORT: '0',
        HERMOD_WAB_SIMULATOR_PORT: '0',
        HERMOD_RCS_SIMULATOR_PORT: '0',
        HERMOD_MMS_SIMULATOR_PORT: '0',
      },
    });
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
  });

  afterAll(async () => {
    client?.close();
    if (hermod) expect(await hermod.stop()).toBe(0);
  });

  const sendAndDeliver = async (destination: string, content: string): Promise<void> => {
    const sent = await eventually(async () => {
      const r = await client.post('/rest/sms/v2/messages', { destination, content });
      return r.status === 202 ? r : undefined;
    }, 30_000);
    await eventually(async () => ((await client.get(`/rest/sms/v2/messages?id=${sent.json.id}`)).json?.status === 'received' ? true : undefined), 30_000);
  };

  it('says in its running line the ports it got, the ones each process says it listens on', () => {
    const [running] = logged(hermod, 'hermod is running');
    const gateways = logged(hermod, 'gateway listening');
    const [core] = logged(hermod, 'core listening');
    const [smsc] = logged(hermod, 'SMSC simulator listening');
    for (const url of [running!.https, running!.http, running!.metrics, running!.smpp]) expect(portOf(url)).toBeGreaterThan(0);
    expect(running!.core).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    // Two gateway processes, one port each for HTTPS and HTTP, shared through the cluster.
    expect(gateways.map((g) => [g.https, g.http])).toEqual([
      [running!.https, running!.http],
      [running!.https, running!.http],
    ]);
    expect(gateways.every((g) => g.core === running!.core)).toBe(true);
    expect(core!.grpc).toBe(running!.core);
    expect(smsc!.smpp).toBe(running!.smpp);
    const ports = [...[running!.https, running!.http, running!.metrics, running!.smpp].map(portOf), Number(running!.core.split(':').pop())];
    expect(new Set(ports).size).toBe(5);
    // The e-mail bounce listener the simulators' sink would use takes a free port too, not its fixed 2526.
    const [bounces] = logged(hermod, 'bounce listener listening');
    expect(bounces!.port).toBeGreaterThan(0);
    expect(bounces!.port).not.toBe(2526);
  });

  it('answers on each of them: HTTPS, the HTTP redirect to the HTTPS port, metrics, core for the CLI, and the SMSC simulator', async () => {
    await sendAndDeliver('+6421000001', 'Kia ora, e hoa mā — tēnā koe 👋🏽');
    const redirect = await createClient(`http://localhost:${hermod.httpPort}`).get('/rest/sms/v2/messages?x=1');
    expect(redirect.status).toBe(308);
    expect(redirect.headers.location).toBe(`https://localhost:${hermod.httpsPort}/rest/sms/v2/messages?x=1`);
    const metrics = await createClient(`http://127.0.0.1:${hermod.metricsPort}`).get('/metrics');
    expect(metrics.status).toBe(200);
    // Counted as every answer is, under the plain port's own interface.
    expect(seriesSum(metrics.text, 'hermod_http_requests_total{interface="http_redirect",method="GET",status="308"}')).toBeGreaterThanOrEqual(1);
    const apps = await hermod.cli(['apps', 'list']);
    expect(apps.code, apps.output).toBe(0);
    expect(apps.output).toContain('acme');
  });

  it('brings core back on the port it had after kill -9, so the gateways it was given to still reach it', async () => {
    const [core] = logged(hermod, 'core listening');
    process.kill(core!.pid, 'SIGKILL');
    const back = await eventually(() => logged(hermod, 'core listening').find((l) => l.pid !== core!.pid), 60_000);
    expect(back.grpc).toBe(core!.grpc);
    await sendAndDeliver('+6421000002', 'Привет, 你好 — anō');
  });

  it('brings a gateway back on the shared ports after kill -9', async () => {
    const before = logged(hermod, 'gateway listening');
    const first = before[0]!;
    process.kill(first.pid, 'SIGKILL');
    const back = await eventually(() => logged(hermod, 'gateway listening').find((l) => !before.some((b) => b.pid === l.pid)), 60_000);
    expect([back.https, back.http]).toEqual([first.https, first.http]);
    await sendAndDeliver('+6421000003', 'Tēnā koutou 🎉');
  });
});
