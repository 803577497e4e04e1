import type { Bus } from '../../core/ports/bus';
import type { HotState } from '../../core/ports/state';
import type { EmailConfig } from '../../lib/config';
import type { Logger } from '../../lib/log';
import { startCarrierPool, type CarrierPool } from '../carrier-pool';
import { createSmtpCarrier } from '../carriers/smtp/smtp-carrier';

/** The e-mail pool of this process: one pooled SMTP transport and the worker that feeds it. */
export async function startEmailWorkerPool(deps: { config: EmailConfig; bus: Bus; state: HotState; log: Logger }): Promise<CarrierPool> {
  return startCarrierPool('email', createSmtpCarrier(deps.config, deps.log.child({ carrier: 'smtp' })), deps);
}
