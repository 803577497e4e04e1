import type { Bus } from '../core/ports/bus';
import type { HotState } from '../core/ports/state';
import type { Logger } from '../lib/log';
import type { Carrier } from './carrier';
import { startChannelWorker, type ChannelWorkerOptions, type Deferral } from './channel-worker';

/** What every channel's pool is started with, besides its carrier's configuration. */
export interface PoolDeps {
  bus: Bus;
  state: HotState;
  log: Logger;
  deferral?: Deferral;
  /** Where the worker remembers what it submitted (on the Redis bus; see ChannelWorkerOptions.submittedMemory). */
  submittedMemory?: ChannelWorkerOptions['submittedMemory'];
}

export interface CarrierPool {
  /** Stops the worker (waiting for the batches in hand), then closes the carrier. */
  stop(): Promise<void>;
}

/** A channel's pool in this process: one carrier and the worker that feeds it from the channel's topic. */
export async function startCarrierPool(channel: string, carrier: Carrier, deps: PoolDeps): Promise<CarrierPool> {
  const worker = await startChannelWorker({
    channel,
    bus: deps.bus,
    state: deps.state,
    carrier,
    log: deps.log,
    deferral: deps.deferral,
    submittedMemory: deps.submittedMemory,
  });
  return {
    async stop() {
      await worker.stop();
      await carrier.close();
    },
  };
}
