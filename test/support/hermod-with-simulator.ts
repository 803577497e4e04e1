import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSmscSimulator, type SmscSimulator } from '../../workers/simulators/smsc-simulator';
import type { SmscSimulatorOptions } from '../../workers/simulators/smsc-simulator-options';
import { createClient, type Client } from './https-client';
import { startHermod, type HermodProcess } from './hermod-process';

export interface HermodWithSimulator {
  hermod: HermodProcess;
  simulator: SmscSimulator;
  /** HTTPS client authenticated as the bootstrap application `acme`. */
  client: Client;
  /**
   * Stops hermod (SIGTERM) and starts it again on the same data directory:
   * `hermod` and `client` are the new ones after. `whileStopped` runs in
   * between (to leave the data directory as a crash would).
   */
  restart(whileStopped?: (dataDir: string) => void): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `hermod start` bound to an SMSC simulator run by the test itself, so a test
 * can watch what reaches the carrier and originate replies (`simulatorOptions`
 * slows it down, for one).
 */
export async function startHermodWithSimulator(
  name: string,
  env: Record<string, string> = {},
  simulatorOptions: SmscSimulatorOptions = {},
): Promise<HermodWithSimulator> {
  const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 20, ...simulatorOptions });
  const { port } = await simulator.start();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `hermod-${name}-`));
  const start = () => startHermod({ dataDir, env: { HERMOD_SMSC_SIMULATOR: 'false', HERMOD_SMPP_PORT: String(port), HERMOD_GATEWAYS: '1', ...env } });
  const hermod = await start();
  const running: HermodWithSimulator = {
    hermod,
    simulator,
    client: createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' }),
    async restart(whileStopped) {
      running.client.close();
      await running.hermod.stop();
      whileStopped?.(dataDir);
      running.hermod = await start();
      running.client = createClient(running.hermod.baseUrl, running.hermod.ca(), { user: 'acme', pass: 'secret' });
    },
    async stop() {
      running.client.close();
      await running.hermod.stop();
      await simulator.stop();
    },
  };
  return running;
}
