import { type Config, ConfigError } from './config';

/**
 * Channel workers in processes of their own share core's hot state only
 * through Redis: with in-process state each process would keep its own, and
 * core would never see what a worker records. Refused at start, whichever way
 * the processes are started (`hermod start`, `hermod core`, `hermod worker`),
 * rather than left with messages queued.
 */
export function requireSharedHotState(config: Readonly<Config>, process: 'core' | 'worker'): void {
  const { bus, state, coreRunsWorkers } = config.adapters;
  if (process === 'worker') {
    if (bus === 'memory') throw new ConfigError('a worker process needs a bus shared between processes: set HERMOD_BUS=redis or HERMOD_BUS=kafka');
    if (state === 'memory') throw new ConfigError('a worker process needs the hot state core uses: set HERMOD_STATE=redis');
    return;
  }
  if (!coreRunsWorkers && state === 'memory') {
    throw new ConfigError(
      `HERMOD_BUS=${bus} runs the channel workers in processes of their own, and they need the hot state core uses: ` +
        'set HERMOD_STATE=redis, or HERMOD_CORE_RUNS_WORKERS=true to run them inside core',
    );
  }
}
