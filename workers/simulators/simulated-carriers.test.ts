import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../lib/config';
import { freePortBelowEphemeral } from '../../test/support/free-port';
import { CommandStatus } from '../carriers/smpp/command-status';
import { createSmppClient } from '../carriers/smpp/smpp-client';
import { quietLog } from './smpp-test-kit';
import { runSmscSimulator } from './smsc-main';

describe('the smsc-simulator role with a carriers file', () => {
  it('runs one simulator per simulated carrier, each with its own rate limit, and none for the real ones', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-simulated-'));
    // Ports written into a file before the simulator starts: below the
    // ephemeral range, so no other test's process is handed one meanwhile (a
    // freePort() port taken by another process left the "nothing listens"
    // wait below hanging in CI).
    const [slow, fast, real] = [await freePortBelowEphemeral(), await freePortBelowEphemeral(), await freePortBelowEphemeral()];
    const file = path.join(dir, 'carriers.yaml');
    fs.writeFileSync(
      file,
      [
        'carriers:',
        `  - { name: slow, host: localhost, port: ${slow}, simulated: { rate: 5 } }`,
        `  - { name: fast, host: localhost, port: ${fast}, simulated: { outcomes: { delivered: 1 } } }`,
        `  - { name: real, host: localhost, port: ${real} }`,
        'default_route: { failover: [slow, fast, real] }',
      ].join('\n'),
    );
    const running = await runSmscSimulator(resolveConfig({ HERMOD_CARRIERS_FILE: file, HERMOD_DATA_DIR: dir }), quietLog);
    try {
      const answers = async (port: number): Promise<number[]> => {
        const client = createSmppClient({ host: '127.0.0.1', port, systemId: 'hermod', password: '', log: quietLog });
        try {
          await client.ready();
          const results = await Promise.allSettled(
            Array.from({ length: 12 }, () =>
              client.submit({ source: 'Korero', destination: '+64211234567', shortMessage: Buffer.from('Kia ora'), dataCoding: 0 }),
            ),
          );
          return results.map((r) => (r.status === 'fulfilled' ? 0 : ((r.reason as { cause?: { status: number } }).cause?.status ?? -1)));
        } finally {
          await client.close(200);
        }
      };
      const atSlow = await answers(slow);
      expect(atSlow.filter((s) => s === 0).length).toBeLessThanOrEqual(5);
      expect(atSlow.filter((s) => s === CommandStatus.ESME_RTHROTTLED).length).toBeGreaterThanOrEqual(7);
      expect(await answers(fast)).toEqual(Array(12).fill(0));
      // Nothing listens for the carrier that is not simulated.
      const refused = createSmppClient({
        host: '127.0.0.1',
        port: real,
        systemId: 'hermod',
        password: '',
        log: quietLog,
        reconnectMinMs: 10,
        reconnectMaxMs: 20,
      });
      const bindFailed = new Promise((resolve) => refused.once('bindFailed', resolve));
      expect(await bindFailed).toMatchObject({ reason: expect.stringContaining('ECONNREFUSED') });
      await refused.close(0);
    } finally {
      await running.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
