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
  const worker = await startChannelWorker({ channel: 'sms', bus: deps.bus, state: deps.state, carrier: routed, log: deps.log });
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
