import type { HttpCarrierConfig } from '../../lib/config';
import { startCarrierPool, type CarrierPool, type PoolDeps } from '../carrier-pool';
import { createMmsCarrier } from '../carriers/mms/mms-carrier';

/** The MMS pool of this process: the HTTP carrier and the worker that feeds it (reports come by webhook to the gateway). */
export async function startMmsWorkerPool(deps: PoolDeps & { config: HttpCarrierConfig }): Promise<CarrierPool> {
  return startCarrierPool('mms', createMmsCarrier(deps.config, deps.log.child({ carrier: 'mms-http' })), deps);
}
