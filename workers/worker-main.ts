import cluster from 'node:cluster';
import { ConfigError, type Config } from '../lib/config';
import { CHANNELS, parseChannels } from '../lib/channels';
import type { Logger } from '../lib/log';
import { requireSharedHotState } from '../lib/shared-hot-state';
import type { Bus } from '../core/ports/bus';
import type { HotState } from '../core/ports/state';
import { startChannelPools } from './channel-pools';

/**
 * `hermod worker --channel <name>[,<name>…]`: one worker of each named channel's pool, on the
 * shared bus and state, which the composition root (bin/run-role.ts) opens
 * once the configuration is known to allow a worker process.
 */
export async function runWorker(config: Readonly<Config>, log: Logger, channel: string, adapters: { openBus(): Promise<Bus>; openState(): Promise<HotState> }) {
  requireSharedHotState(config, 'worker');
  const named = parseChannels(channel);
  if ('unknown' in named) throw new ConfigError(`unknown channel ${JSON.stringify(named.unknown)}; known: ${CHANNELS.join(', ')}`);
  // Named on its own command line, an RCS worker without a key would reject every RCS send for good, customers'
  // messages paying for a setting left out. `hermod start` runs every channel's pool whether it is set up or not:
  // there an RCS attempt is rejected at once, saying why, and Intelligent Messaging goes on to the next attempt.
  if (named.channels.includes('rcs') && !config.channels.rcs.serviceAccount && !cluster.isWorker)
    throw new ConfigError(
      'an RCS worker needs HERMOD_RCS_SERVICE_ACCOUNT, the path of the RBM service account’s JSON key file (for the simulators, the one `hermod channel-simulators` logs that it wrote)',
    );
  const bus = await adapters.openBus();
  const state = await adapters.openState();
  const pools = await startChannelPools(named.channels, { config, bus, state, log });
  return {
    async stop() {
      await pools.stop();
      await bus.close();
      await state.close();
    },
  };
}
