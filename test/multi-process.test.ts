import { afterAll, describe, it } from 'vitest';
import type { RoleProcess } from './support/role-process';
import { deleteRedisKeys, randomPrefix } from './support/redis-keys';
import { runMultiProcess } from './support/multi-process-run';

describe('roles as separate processes on the Redis bus and Redis state', () => {
  const processes: RoleProcess[] = [];
  const prefix = randomPrefix('mp');
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop().catch(() => undefined)));
    await deleteRedisKeys(prefix);
  });

  it('delivers 5,000 messages sent through two gateways to the carrier at least once while one of three workers is killed with -9', async () => {
    await runMultiProcess('Redis bus', { HERMOD_BUS: 'redis' }, prefix, processes);
    // As long as its own waits allow (up to 120 s for the last submits alone): other files run beside it.
  }, 600_000);
});
