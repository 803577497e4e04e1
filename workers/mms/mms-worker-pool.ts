import type { Bus } from '../../core/ports/bus';
import type { HotState } from '../../core/ports/state';
import type { HttpCarrierConfig } from '../../lib/config';
import type { Logger } from '../../lib/log';
import { startCarrierPool, type CarrierPool } from '../carrier-pool';
import type { Deferral } from '../channel-worker';
import { createMmsCarrier } from '../carriers/mms/mms-carrier';

/** The MMS pool of this process: the HTTP carrier and the worker that feeds it (reports come by webhook to the gateway). */
export async function startMmsWorkerPool(deps: {
  config: HttpCarrierConfig;
  bus: Bus;
  state: HotState;
  log: Logger;
  deferral?: Deferral;
}): Promise<CarrierPool> {
  return startCarrierPool('mms', createMmsCarrier(deps.config, deps.log.child({ carrier: 'mms-http' })), deps);
}
