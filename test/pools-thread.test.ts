import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { eventually } from './support/eventually';
import { seriesSum } from './support/metric-samples';

const TEXT = 'Kia ora, e hoa mā — tēnā koe 👋🏽 你好';

describe('HERMOD_POOLS_THREAD=true: core runs the channel pools on a thread of its own', () => {
  let hermod: HermodProcess;
  let client: Client;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-pools-thread-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_POOLS_THREAD: 'true', HERMOD_SMSC_RECEIPT_DELAY: '20ms', HERMOD_GATEWAYS: '1' } });
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
  });

  afterAll(async () => {
    client?.close();
    if (hermod) expect(await hermod.stop()).toBe(0);
  });

  it('delivers messages through the thread and serves the thread’s SMPP metrics with the process’s', async () => {
    const sent = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.post('/rest/sms/v2/messages', { destination: `+642100${String(i).padStart(4, '0')}`, content: TEXT })),
    );
    for (const s of sent) expect(s.status).toBe(202);
    for (const s of sent) {
      const read = await eventually(async () => {
        const r = await client.get(`/rest/sms/v2/messages?id=${s.json.id}`);
        return r.json?.status === 'received' ? r : undefined;
      });
      expect(read.json.content ?? TEXT).toBe(TEXT);
    }
    const metrics = await createClient(`http://127.0.0.1:${hermod.metricsPort}`).get('/metrics');
    // Counted on the pool thread, served by core's process through the supervisor.
    expect(seriesSum(metrics.text, 'hermod_smpp_submits_total{outcome="accepted"}')).toBeGreaterThanOrEqual(20);
    expect(seriesSum(metrics.text, 'hermod_core_messages_total{channel="sms",status="received"}')).toBeGreaterThanOrEqual(20);
  });
});
