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

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

describe('SMSC simulator entry point', () => {
  it('runs as a process that logs one JSON line with its address, serves SMPP, and stops on SIGTERM', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-smsc-main-'));
    const child = spawn(process.execPath, [path.join(root, 'bin/hermod.js'), 'smsc-simulator'], {
      cwd: root,
      env: { ...process.env, HERMOD_SMSC_PORT: '0', HERMOD_SMSC_RECEIPT_DELAY: '0ms', HERMOD_METRICS_PORT: '0', HERMOD_DATA_DIR: dataDir },
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
