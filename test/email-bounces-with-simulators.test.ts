import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { freePortBelowEphemeral } from './support/free-port';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { seriesSum } from './support/metric-samples';

const API_KEY = 'bounce-test-key-0123456789abcdef';

/** Log lines of one kind, parsed. */
const logged = (hermod: HermodProcess, msg: string): Record<string, any>[] =>
  hermod
    .output()
    .split('\n')
    .filter((l) => l.includes(`"msg":${JSON.stringify(msg)}`))
    .map((l) => JSON.parse(l));

describe('e-mail bounces with the simulators hermod starts itself (as npm start runs them)', () => {
  let hermod: HermodProcess;
  let client: Client;

  beforeAll(async () => {
    // The sink (in the simulators' process) is told the bounce listener's port, so both are fixed here, as npm start's 2525 and 2526.
    // Below the ephemeral range: a port picked among the ephemeral ones was taken by another test's process before hermod bound it (CI).
    const [sinkPort, bouncePort] = [await freePortBelowEphemeral(), await freePortBelowEphemeral()];
    hermod = await startHermod({
      dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-bounce-sims-')),
      env: {
        HERMOD_GATEWAYS: '1',
        HERMOD_CHANNEL_SIMULATORS: 'true',
        HERMOD_SMTP_SINK_PORT: String(sinkPort),
        HERMOD_BOUNCE_SMTP_PORT: String(bouncePort),
        HERMOD_WAB_SIMULATOR_PORT: '0',
        HERMOD_RCS_SIMULATOR_PORT: '0',
        HERMOD_MMS_SIMULATOR_PORT: '0',
        HERMOD_BOOTSTRAP_API_KEY: API_KEY,
      },
    });
    client = createClient(hermod.baseUrl, hermod.ca());
  }, 90_000);

  afterAll(async () => {
    client?.close();
    if (hermod) await hermod.stop();
  });

  it('the sink bounces a …+late-bounce… e-mail to the listener, which records the attempt failed with the reason', async () => {
    const email = `hemi+late-bounce.${randomUUID().slice(0, 8)}@example.org`;
    const r = await client.post(
      '/rest/im/v1/message',
      { destination: { email }, message: { type: 'text', text: { body: 'Kia ora, e hoa mā — tēnā koe 👋🏽' } }, delivery_attempts: [{ channel: 'email' }] },
      { authorization: API_KEY },
    );
    expect(r.status, r.text).toBe(202);

    const bounced = await eventually(() => logged(hermod, 'e-mail bounced')[0], 20_000, 100);
    expect(bounced).toMatchObject({ status: '5.1.1', diagnostic: expect.stringContaining(email) });
    await eventually(() => logged(hermod, 'im message failed after delivery').find((l) => l.id === r.json.id), 20_000, 100);

    // Counted once, as what it is: a failure after delivery, not also as a late report.
    const metrics = await (await fetch(`http://127.0.0.1:${hermod.metricsPort}/metrics`)).text();
    const count = (outcome: string) => seriesSum(metrics, `hermod_im_attempts_total{channel="email",outcome="${outcome}"}`) || 0;
    expect({ failedAfterDelivery: count('failed_after_delivery'), lateReport: count('late_report') }).toEqual({ failedAfterDelivery: 1, lateReport: 0 });
  });
});
