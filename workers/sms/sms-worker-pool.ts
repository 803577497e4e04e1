import type { Bus } from '../../core/ports/bus';
import type { HotState } from '../../core/ports/state';
import { createRouteMatcher } from '../../core/domain/route-matcher';
import type { CarriersConfig } from '../../lib/carriers-file';
import type { Logger } from '../../lib/log';
import { startChannelWorker, type ChannelWorkerOptions, type Deferral } from '../channel-worker';
import { startCarrierSnapshotReporter } from '../carrier-snapshot-reporter';
import { createRoutedCarrier } from './routed-carrier';
import { createSmppCarrier } from './smpp-carrier';

export interface SmsWorkerPool {
  stop(): Promise<void>;
}

/** The SMS pool of this process: binds to every carrier of the carriers file, and the worker that routes each message to one. */
export async function startSmsWorkerPool(deps: {
  config: CarriersConfig;
  /** The bus's partitions of the SMS topic (HERMOD_BUS_PARTITIONS): each hands this worker one batch at a time. */
  partitions: number;
  bus: Bus;
  state: HotState;
  log: Logger;
  deferral?: Deferral;
  submittedMemory?: ChannelWorkerOptions['submittedMemory'];
}): Promise<SmsWorkerPool> {
  const carriers = deps.config.carriers.map((c) => createSmppCarrier(c, deps.log.child({ carrier: c.name })));
  const routed = createRoutedCarrier({
    carriers,
    configs: deps.config.carriers,
    decide: createRouteMatcher(deps.config),
    state: deps.state,
    log: deps.log,
  });
  const worker = await startChannelWorker({
    channel: 'sms',
    bus: deps.bus,
    state: deps.state,
    carrier: routed,
    log: deps.log,
    maxBatch: smsBatchSize(deps.config.carriers, deps.partitions),
    deferral: deps.deferral,
    submittedMemory: deps.submittedMemory,
  });
  // Every bind of every carrier, each second, for the operator console.
  const reporter = startCarrierSnapshotReporter({ state: deps.state, channel: 'sms', snapshot: () => carriers.flatMap((c) => c.snapshots()), log: deps.log });
  return {
    async stop() {
      await reporter.stop();
      await worker.stop();
      await routed.close();
    },
  };
}

/**
 * Jobs the SMS worker takes from one partition at a time. A job in hand waits,
 * with its send's promises and buffers, until the carrier's window has room:
 * long enough to be copied into V8's old generation. Batches of 512 from 16
 * partitions held 8,192 jobs against a window of 256, and a 200,000-member
 * fan-out promoted 1.0 GB; batches sized so that all partitions together hold
 * twice every bind's window promoted 0.66 GB (bench/RESULTS.md, fifteenth
 * session). Twice, so that a worker given only some of the partitions, or
 * waiting on a slow answer, still keeps the window full.
 */
export function smsBatchSize(carriers: readonly { windowSize: number; binds: number }[], partitions: number): number {
  const window = carriers.reduce((n, c) => n + c.windowSize * c.binds, 0);
  return Math.min(512, Math.max(8, Math.ceil((2 * window) / Math.max(1, partitions))));
}
