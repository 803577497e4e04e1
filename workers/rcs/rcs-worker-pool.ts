import type { Bus } from '../../core/ports/bus';
import type { HotState } from '../../core/ports/state';
import type { RcsCarrierConfig } from '../../lib/config';
import type { Logger } from '../../lib/log';
import { startCarrierPool, type CarrierPool } from '../carrier-pool';
import type { Deferral } from '../channel-worker';
import { createRcsCarrier } from '../carriers/rcs/rcs-carrier';

/** The RCS pool of this process: the HTTP carrier and the worker that feeds it (reports come by webhook to the gateway). */
export async function startRcsWorkerPool(deps: {
  config: RcsCarrierConfig;
  bus: Bus;
  state: HotState;
  log: Logger;
  deferral?: Deferral;
}): Promise<CarrierPool> {
  return startCarrierPool('rcs', createRcsCarrier(deps.config, deps.log.child({ carrier: 'rbm' })), deps);
}
