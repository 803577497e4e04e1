import path from 'node:path';
import type { Config } from '../../lib/config';
import type { Logger } from '../../lib/log';
import { listenError } from '../../lib/listen-error';
import { watchSimulatorSubmits } from '../../lib/metrics';
import { createSmscSimulator, type SmscSimulatorOptions } from './smsc-simulator';

/** This process's simulators, for hermod_smsc_simulator_submits_total, and the submits of those stopped. */
const running = new Set<{ readonly submitCount: number }>();
let stoppedSubmits = 0;

/**
 * Starts the simulator; logs one JSON line with where it listens. A port it
 * cannot bind is a configuration error naming `setting`.
 */
export async function startSimulator(
  options: SmscSimulatorOptions,
  log: Logger,
  setting = 'HERMOD_SMSC_PORT',
): Promise<{ port: number; ports: { smpp: number }; stop(): Promise<void> }> {
  const simulator = createSmscSimulator({ log, ...options });
  const { host, port } = await simulator.start().catch((err: unknown) => {
    const hostSetting = setting === 'HERMOD_SMSC_PORT' ? 'HERMOD_SMSC_HOST' : setting;
    throw listenError(err, setting, options.host ?? '127.0.0.1', options.port ?? 0, 'another SMSC simulator', hostSetting);
  });
  log.info('SMSC simulator listening', { host, port, smpp: `smpp://${host}:${port}`, receiptDelayMs: options.receiptDelayMs, outcomes: options.outcomes });
  running.add(simulator);
  watchSimulatorSubmits(() => stoppedSubmits + [...running].reduce((sum, s) => sum + s.submitCount, 0));
  return {
    port,
    ports: { smpp: port },
    async stop() {
      await simulator.stop();
      if (running.delete(simulator)) stoppedSubmits += simulator.submitCount;
      log.info('SMSC simulator stopped', { submits: simulator.submitCount });
    },
  };
}

/**
 * The `smsc-simulator` role of `hermod start` / `hermod smsc-simulator`,
 * configured by lib/config: one simulator per carrier the carriers file marks
 * `simulated` (each with its own outcome mix and rate limit, on the carrier's
 * port), or without a carriers file the one of HERMOD_SMSC_*. Receipts it owes
 * are kept in its data directory, so they reach the ESME after a crash of
 * either side.
 */
export async function runSmscSimulator(config: Readonly<Config>, log: Logger): Promise<{ ports: { smpp?: number }; stop(): Promise<void> }> {
  const dir = path.join(config.dataDir, 'smsc-simulator');
  if (config.carriers.file) {
    const simulated = config.carriers.carriers.filter((c) => c.simulated);
    const started: { stop(): Promise<void> }[] = [];
    for (const c of simulated) {
      started.push(
        await startSimulator(
          {
            host: c.host === 'localhost' ? '127.0.0.1' : c.host,
            port: c.port,
            receiptDelayMs: c.simulated!.receiptDelayMs,
            outcomes: c.simulated!.outcomes,
            throttlePerSecond: c.simulated!.rate || undefined,
            submitIds: c.submitIds,
            receiptIds: c.receiptIds,
            storeFile: path.join(dir, `${c.name}-owed-receipts.log`),
          },
          log.child({ carrier: c.name }),
          `carrier ${c.name} in HERMOD_CARRIERS_FILE`,
        ),
      );
    }
    return {
      ports: {},
      async stop() {
        await Promise.all(started.map((s) => s.stop()));
      },
    };
  }
  const s = config.simulator;
  const storeFile = path.join(dir, 'owed-receipts.log');
  return startSimulator({ host: s.host, port: s.port, receiptDelayMs: s.receiptDelayMs, outcomes: s.outcomes, storeFile }, log);
}
