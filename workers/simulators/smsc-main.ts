import path from 'node:path';
import type { Config } from '../../lib/config';
import type { Logger } from '../../lib/log';
import { createSmscSimulator, type SmscSimulatorOptions } from './smsc-simulator';

/** Starts the simulator; logs one JSON line with where it listens. */
export async function startSimulator(options: SmscSimulatorOptions, log: Logger): Promise<{ port: number; ports: { smpp: number }; stop(): Promise<void> }> {
  const simulator = createSmscSimulator({ log, ...options });
  const { host, port } = await simulator.start();
  log.info('SMSC simulator listening', { host, port, smpp: `smpp://${host}:${port}`, receiptDelayMs: options.receiptDelayMs, outcomes: options.outcomes });
  return {
    port,
    ports: { smpp: port },
    async stop() {
      await simulator.stop();
      log.info('SMSC simulator stopped', { submits: simulator.submitCount });
    },
  };
}

/**
 * The `smsc-simulator` role of `hermod start` / `hermod smsc-simulator`,
 * configured by lib/config. Receipts it owes are kept in its data directory,
 * so they reach the ESME after a crash of either side.
 */
export function runSmscSimulator(config: Readonly<Config>, log: Logger): Promise<{ ports: { smpp: number }; stop(): Promise<void> }> {
  const s = config.simulator;
  const storeFile = path.join(config.dataDir, 'smsc-simulator', 'owed-receipts.log');
  return startSimulator({ host: s.host, port: s.port, receiptDelayMs: s.receiptDelayMs, outcomes: s.outcomes, storeFile }, log);
}
