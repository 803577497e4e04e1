import type { Bus } from '../../core/ports/bus';
import type { HotState } from '../../core/ports/state';
import { createRouteMatcher } from '../../core/domain/route-matcher';
import type { CarriersConfig } from '../../lib/carriers-file';
import type { Logger } from '../../lib/log';
import { startChannelWorker } from '../channel-worker';
import { startCarrierSnapshotReporter } from '../carrier-snapshot-reporter';
import { createRoutedCarrier } from './routed-carrier';
import { createSmppCarrier } from './smpp-carrier';

export interface SmsWorkerPool {
  stop(): Promise<void>;
}

/** The SMS pool of this process: binds to every carrier of the carriers file, and the worker that routes each message to one. */
export async function startSmsWorkerPool(deps: { config: CarriersConfig; bus: Bus; state: HotState; log: Logger }): Promise<SmsWorkerPool> {
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
    // Jobs in hand are kept few: a job taken early waits, with all its send's
    // promises and buffers, long enough to be copied into V8's old generation.
    // A 200,000-member fan-out promoted 1.0 GB with batches of 512 (eight
    // partitions: 4,096 jobs in hand against a window of 256), 0.62 GB with 16
    // (bench/RESULTS.md, fifteenth session). Eight partitions of 16 still keep
    // the simulator's window busy; with more partitions, no more are sent at
    // once than every bind's window holds: the rest wait as jobs, not as sends.
    maxBatch: 16,
    maxSending: deps.config.carriers.reduce((n, c) => n + c.windowSize * c.binds, 0),
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
