import type { Bus } from '../../core/ports/bus';
import type { HttpCarrierConfig } from '../../lib/config';
import type { HotState } from '../../core/ports/state';
import type { Logger } from '../../lib/log';
import { startChannelWorker } from '../channel-worker';
import { createWhatsAppCarrier } from '../carriers/whatsapp/whatsapp-carrier';

/** The WhatsApp Business pool of this process: the HTTP carrier and the worker that feeds it (reports come by webhook to the gateway). */
export async function startWabWorkerPool(deps: { config: HttpCarrierConfig; bus: Bus; state: HotState; log: Logger }) {
  const carrier = createWhatsAppCarrier(deps.config, deps.log.child({ carrier: 'whatsapp' }));
  const worker = await startChannelWorker({ channel: 'wab', bus: deps.bus, state: deps.state, carrier, log: deps.log });
  return {
    async stop() {
      await worker.stop();
      await carrier.close();
    },
  };
}
