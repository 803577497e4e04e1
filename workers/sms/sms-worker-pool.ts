import type { Bus } from '../../core/ports/bus';
import type { HotState } from '../../core/ports/state';
import type { SmppConfig } from '../../lib/config';
import type { Logger } from '../../lib/log';
import { startChannelWorker } from '../channel-worker';
import { createSmppCarrier } from './smpp-carrier';
import { startCarrierSnapshotReporter } from '../carrier-snapshot-reporter';

/** The SMS pool of this process: one SMPP bind and the worker that feeds it. */
export async function startSmsWorkerPool(deps: { config: SmppConfig; bus: Bus; state: HotState; log: Logger }) {
  const carrier = createSmppCarrier(deps.config, deps.log.child({ carrier: 'smpp' }));
  const worker = await startChannelWorker({ channel: 'sms', bus: deps.bus, state: deps.state, carrier, log: deps.log });
  // Every bind of the pool, each second, for the operator console.
  const reporter = startCarrierSnapshotReporter({ state: deps.state, channel: 'sms', snapshot: () => [carrier.snapshot()], log: deps.log });
  return {
    async stop() {
      await reporter.stop();
      await worker.stop();
      await carrier.close();
    },
  };
}
