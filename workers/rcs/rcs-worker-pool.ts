import type { Bus } from '../../core/ports/bus';
import type { HttpCarrierConfig } from '../../lib/config';
import type { HotState } from '../../core/ports/state';
import type { Logger } from '../../lib/log';
import { startChannelWorker } from '../channel-worker';
import { createRcsCarrier } from '../carriers/rcs/rcs-carrier';

/** The RCS pool of this process: the HTTP carrier and the worker that feeds it (reports come by webhook to the gateway). */
export async function startRcsWorkerPool(deps: { config: HttpCarrierConfig; bus: Bus; state: HotState; log: Logger }) {
  const carrier = createRcsCarrier(deps.config, deps.log.child({ carrier: 'rbm' }));
  const worker = await startChannelWorker({ channel: 'rcs', bus: deps.bus, state: deps.state, carrier, log: deps.log });
  return {
    async stop() {
      await worker.stop();
      await carrier.close();
    },
  };
}
