import type { Bus } from '../../core/ports/bus';
import type { HotState } from '../../core/ports/state';
import type { EmailConfig } from '../../lib/config';
import type { Logger } from '../../lib/log';
import { startChannelWorker } from '../channel-worker';
import { createSmtpCarrier } from '../carriers/smtp/smtp-carrier';

/** The e-mail pool of this process: one pooled SMTP transport and the worker that feeds it. */
export async function startEmailWorkerPool(deps: { config: EmailConfig; bus: Bus; state: HotState; log: Logger }) {
  const carrier = createSmtpCarrier(deps.config, deps.log.child({ carrier: 'smtp' }));
  const worker = await startChannelWorker({ channel: 'email', bus: deps.bus, state: deps.state, carrier, log: deps.log });
  return {
    async stop() {
      await worker.stop();
      await carrier.close();
    },
  };
}
