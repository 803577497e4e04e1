import type { Config } from '../lib/config';
import type { Logger } from '../lib/log';
import { openBus, openState } from '../core/adapters/open-adapters';
import { CHANNELS, isChannel, startChannelPools } from './channel-pools';

/** `hermod worker --channel <name>`: one worker of a channel's pool, on the shared bus and state. */
export async function runWorker(config: Readonly<Config>, log: Logger, channel: string) {
  if (config.adapters.bus === 'memory') {
    throw new Error('a worker process needs a bus shared between processes: set HERMOD_BUS=redis or HERMOD_BUS=kafka');
  }
  if (!isChannel(channel)) throw new Error(`unknown channel ${JSON.stringify(channel)}; known: ${CHANNELS.join(', ')}`);
  const bus = await openBus(config.adapters);
  const state = await openState(config.adapters);
  const pools = await startChannelPools([channel], { config, bus, state, log });
  return {
    async stop() {
      await pools.stop();
      await bus.close();
      await state.close();
    },
  };
}
