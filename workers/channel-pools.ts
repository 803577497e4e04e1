import path from 'node:path';
import type { Bus } from '../core/ports/bus';
import type { HotState } from '../core/ports/state';
import type { Config } from '../lib/config';
import type { Channel } from '../lib/channels';
import type { Logger } from '../lib/log';

/** Starts the worker pools of the given channels in this process; stop() stops them all. */
export async function startChannelPools(channels: readonly Channel[], deps: { config: Readonly<Config>; bus: Bus; state: HotState; log: Logger }) {
  const { config, bus, state } = deps;
  // Every pool gives a message its carrier keeps refusing back to core on the same terms.
  const deferral = config.sendRetry;
  // On the Redis bus, whose streams a Redis back without its data loses (its `submitted` reports with them), each
  // worker remembers what it submitted, so what core then hands over again is not sent again. Elsewhere only a
  // crash hands a submitted message over again: covered by hot state's submit marks on Redis state; on in-process
  // state, the few in flight at that moment (recovery.ts), which the memory is not worth a write a submit for.
  const submittedMemory = config.adapters.bus === 'redis' ? { dir: path.join(config.dataDir, 'workers') } : undefined;
  const pools: { stop(): Promise<void> }[] = [];
  // E-mail first: its bounce listener's port, if another process holds it, stops the start before a carrier login.
  for (const channel of [...channels].sort((a, b) => Number(b === 'email') - Number(a === 'email'))) {
    const log = deps.log.child({ channel });
    switch (channel) {
      case 'sms':
        pools.push(
          await (await import('./sms/sms-worker-pool')).startSmsWorkerPool({
            config: config.carriers,
            partitions: config.adapters.busPartitions,
            bus,
            state,
            log,
            deferral,
            submittedMemory,
          }),
        );
        break;
      case 'email':
        pools.push(
          await (await import('./email/email-worker-pool')).startEmailWorkerPool({
            config: config.channels.email,
            dataDir: config.dataDir,
            bus,
            state,
            log,
            deferral,
            submittedMemory,
          }),
        );
        break;
      case 'wab':
        pools.push(
          await (await import('./wab/wab-worker-pool')).startWabWorkerPool({ config: config.channels.wab, bus, state, log, deferral, submittedMemory }),
        );
        break;
      case 'rcs':
        pools.push(
          await (await import('./rcs/rcs-worker-pool')).startRcsWorkerPool({ config: config.channels.rcs, bus, state, log, deferral, submittedMemory }),
        );
        break;
      case 'mms':
        pools.push(
          await (await import('./mms/mms-worker-pool')).startMmsWorkerPool({ config: config.channels.mms, bus, state, log, deferral, submittedMemory }),
        );
        break;
    }
  }
  return {
    /** Each SMS carrier's binds, window, submits per second and last error in this process; [] without an SMS pool. */
    async stop() {
      await Promise.all(pools.map((p) => p.stop()));
    },
  };
}
