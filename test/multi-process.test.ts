import { randomUUID } from 'node:crypto';
import { afterAll, describe, it } from 'vitest';
import type { RoleProcess } from './support/role-process';
import { deleteRedisKeys } from './support/redis-keys';
import { runMultiProcess } from './support/multi-process-run';

describe('roles as separate processes on the Redis bus and Redis state', () => {
  const processes: RoleProcess[] = [];
  const prefix = `hermod-mp-${randomUUID().slice(0, 8)}`;
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop().catch(() => undefined)));
    await deleteRedisKeys(prefix);
  });

  it('delivers 10,000 messages sent through two gateways to the carrier at least once while one of three workers is killed with -9', async () => {
    await runMultiProcess('Redis bus', { HERMOD_BUS: 'redis' }, prefix, processes);
  });
});
