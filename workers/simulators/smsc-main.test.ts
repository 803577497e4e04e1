import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createSmppClient } from '../carriers/smpp/smpp-client';
import { quietLog } from './smpp-test-kit';
import { freePortBelowEphemeral } from '../../test/support/free-port';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

describe('SMSC simulator entry point', () => {
  it('runs as a process that logs one JSON line with its address, serves SMPP, counts its submits on /metrics, and stops on SIGTERM', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-smsc-main-'));
    const metricsPort = await freePortBelowEphemeral();
    const child = spawn(process.execPath, [path.join(root, 'bin/hermod.js'), 'smsc-simulator'], {
      cwd: root,
      env: { ...process.env, HERMOD_SMSC_PORT: '0', HERMOD_SMSC_RECEIPT_DELAY: '0ms', HERMOD_METRICS_PORT: String(metricsPort), HERMOD_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
      const logged = JSON.parse(line);
      expect(logged).toMatchObject({ level: 'info', msg: 'SMSC simulator listening', host: '127.0.0.1' });
      const client = createSmppClient({ host: '127.0.0.1', port: logged.port, systemId: 'hermod', password: 'x', log: quietLog });
      await client.ready();
      const [{ messageId }, [receipt]] = await Promise.all([
        client.submit({ source: 'a', destination: '+6421', shortMessage: Buffer.from('hi'), dataCoding: 0 }),
        once(client, 'receipt'),
      ]);
      expect(receipt.carrierMessageId).toBe(messageId);
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      // What an SRE counts a load test by, without reading debug logs.
      expect(metrics).toMatch(/^hermod_smsc_simulator_submits_total 1$/m);
      // Core's own gauges, a 0 that means nothing here, are not served by a process that never makes them.
      expect(metrics).not.toMatch(/^hermod_callbacks_owed /m);
      expect(metrics).not.toMatch(/^hermod_campaigns_sending /m);
      expect(metrics).not.toMatch(/^hermod_callbacks_unacknowledged /m);
      expect(metrics).not.toMatch(/^hermod_smpp_receipt_latency_seconds_count /m);
      await client.close(100);
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
