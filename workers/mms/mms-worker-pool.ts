import type { Bus } from '../../core/ports/bus';
import type { HttpCarrierConfig } from '../../lib/config';
import type { HotState } from '../../core/ports/state';
import type { Logger } from '../../lib/log';
import { startChannelWorker } from '../channel-worker';
import { createMmsCarrier } from '../carriers/mms/mms-carrier';

/** The MMS pool of this process: the HTTP carrier and the worker that feeds it (reports come by webhook to the gateway). */
export async function startMmsWorkerPool(deps: { config: HttpCarrierConfig; bus: Bus; state: HotState; log: Logger }) {
  const carrier = createMmsCarrier(deps.config, deps.log.child({ carrier: 'mms-http' }));
  const worker = await startChannelWorker({ channel: 'mms', bus: deps.bus, state: deps.state, carrier, log: deps.log });
  return {
    async stop() {
      await worker.stop();
      await carrier.close();
    },
  };
}
