import type { RcsCarrierConfig } from '../../lib/config';
import { startCarrierPool, type CarrierPool, type PoolDeps } from '../carrier-pool';
import { createRcsCarrier } from '../carriers/rcs/rcs-carrier';

/** The RCS pool of this process: the HTTP carrier and the worker that feeds it (reports come by webhook to the gateway). */
export async function startRcsWorkerPool(deps: PoolDeps & { config: RcsCarrierConfig }): Promise<CarrierPool> {
  if (!deps.config.serviceAccount)
    deps.log.warn(
      'RCS has no service-account key (HERMOD_RCS_SERVICE_ACCOUNT): every RCS attempt is rejected at once, and Intelligent Messaging goes on to its next attempt',
    );
  return startCarrierPool('rcs', createRcsCarrier(deps.config, deps.log.child({ carrier: 'rbm' })), deps);
}
