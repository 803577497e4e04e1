import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { eventually } from './support/eventually';
import { freePortBelowEphemeral } from './support/free-port';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { seriesSum } from './support/metric-samples';

const KIA_ORA = 'Kia ora, e hoa mā — tēnā koe 👋🏽';

/** The carrier label's value of a counter in Prometheus text. */
function counter(metrics: string, name: string, labels: Record<string, string>): number {
  return (
    seriesSum(
      metrics,
      `${name}{${Object.entries(labels)
        .map(([k, v]) => `${k}="${v}"`)
        .join(',')}}`,
    ) || 0
  );
}

describe('npm start with the README carriers file: one SMSC simulator per simulated carrier', () => {
  let hermod: HermodProcess;
  let client: Client;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-simulated-carriers-'));
    const readme = fs.readFileSync(path.join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const example = /```yaml\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('### Carriers and routes')))![1]!;
    // Simulated carriers listen where the file says: free ports instead of the example's 2776 and 2777, below the
    // ephemeral range, so that no other test's port-0 socket takes one before the simulators bind it.
    const [spark, oneNz] = [await freePortBelowEphemeral(), await freePortBelowEphemeral()];
    const file = path.join(dataDir, 'carriers.yaml');
    fs.writeFileSync(file, example.replace('port: 2776', `port: ${spark}`).replace('port: 2777', `port: ${oneNz}`));
    hermod = await startHermod({ dataDir, env: { HERMOD_CARRIERS_FILE: file, HERMOD_GATEWAYS: '1' } });
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await hermod?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs both simulated carriers, routes by prefix and sender, and shows submits and binds per carrier', async () => {
    expect(hermod.output()).toMatch(/"simulatedCarriers":\["spark smpp:\/\/localhost:\d+","one-nz smpp:\/\/localhost:\d+"\]/);
    const toSpark = await Promise.all(
      Array.from({ length: 6 }, (_, i) => client.post('/rest/sms/v2/messages', { destination: `+6421555000${i}`, content: `${KIA_ORA} ${i}` })),
    );
    const toOneNz = await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        client.post('/rest/sms/v2/messages', { destination: `+6421555100${i}`, content: `${KIA_ORA} 你好 ${i}`, mask: 'Korero' }),
      ),
    );
    const finals = await Promise.all(
      [...toSpark, ...toOneNz].map((s) =>
        eventually(async () => {
          const r = await client.get(`/rest/sms/v2/messages?id=${s.json.id}`);
          return ['received', 'failed'].includes(r.json?.status) ? (r.json.status as string) : undefined;
        }, 60_000),
      ),
    );
    // spark's simulator delivers 9 in 10 and reports the rest undeliverable; one-nz's delivers all.
    expect(finals.slice(6)).toEqual(['received', 'received', 'received']);

    const metrics = await eventually(async () => {
      const text = await (await fetch(`http://localhost:${hermod.metricsPort}/metrics`)).text();
      return counter(text, 'hermod_smpp_carrier_submits_total', { carrier: 'spark', outcome: 'accepted' }) >= 6 ? text : undefined;
    });
    expect(counter(metrics, 'hermod_smpp_carrier_submits_total', { carrier: 'spark', outcome: 'accepted' })).toBe(6);
    expect(counter(metrics, 'hermod_smpp_carrier_submits_total', { carrier: 'one-nz', outcome: 'accepted' })).toBe(3);
    expect(counter(metrics, 'hermod_smpp_carrier_binds_up', { carrier: 'spark' })).toBe(2);
    expect(counter(metrics, 'hermod_smpp_carrier_binds_up', { carrier: 'one-nz' })).toBe(1);
  }, 120_000);
});
