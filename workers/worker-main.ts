import { ConfigError, type Config } from '../lib/config';
import { CHANNELS, isChannel } from '../lib/channels';
import type { Logger } from '../lib/log';
import type { Bus } from '../core/ports/bus';
import type { HotState } from '../core/ports/state';
import { startChannelPools } from './channel-pools';

/**
 * `hermod worker --channel <name>`: one worker of a channel's pool, on the
 * shared bus and state, which the composition root (bin/run-role.ts) opens
 * once the configuration is known to allow a worker process.
 */
export async function runWorker(config: Readonly<Config>, log: Logger, channel: string, adapters: { openBus(): Promise<Bus>; openState(): Promise<HotState> }) {
  if (config.adapters.bus === 'memory') {
    throw new ConfigError('a worker process needs a bus shared between processes: set HERMOD_BUS=redis or HERMOD_BUS=kafka');
  }
  // In-process state would be this worker's own: core would never see what it records.
  if (config.adapters.state === 'memory') throw new ConfigError('a worker process needs the hot state core uses: set HERMOD_STATE=redis');
  if (!isChannel(channel)) throw new ConfigError(`unknown channel ${JSON.stringify(channel)}; known: ${CHANNELS.join(', ')}`);
  const bus = await adapters.openBus();
  const state = await adapters.openState();
  const pools = await startChannelPools([channel], { config, bus, state, log });
  return {
    async stop() {
      await pools.stop();
      await bus.close();
      await state.close();
    },
  };
}
