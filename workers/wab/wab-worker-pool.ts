import type { HttpCarrierConfig } from '../../lib/config';
import { startCarrierPool, type CarrierPool, type PoolDeps } from '../carrier-pool';
import { createWhatsAppCarrier } from '../carriers/whatsapp/whatsapp-carrier';

/** The WhatsApp Business pool of this process: the HTTP carrier and the worker that feeds it (reports come by webhook to the gateway). */
export async function startWabWorkerPool(deps: PoolDeps & { config: HttpCarrierConfig }): Promise<CarrierPool> {
  return startCarrierPool('wab', createWhatsAppCarrier(deps.config, deps.log.child({ carrier: 'whatsapp' })), deps);
}
