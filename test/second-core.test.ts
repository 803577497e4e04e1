import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from './support/redis-keys';
import { startRole, type RoleProcess } from './support/role-process';

/**
 * An operator starts a second core on a deployment's Redis (hot state and
 * bus) with the defaults: HERMOD_CORE_INSTANCE=0, as the first, and an
 * embedded history of its own. Two such cores handed out the same v1 ids and,
 * after a restart, sent delivered SMS again (an operator's trial). The second
 * must refuse to start instead, saying why.
 */
describe('a second core on the same deployment', () => {
  const prefix = randomPrefix('second-core');
  const processes: RoleProcess[] = [];
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await deleteRedisKeys(prefix);
  });

  const envOf = (dataDir: string) => ({
    HERMOD_BUS: 'redis',
    HERMOD_STATE: 'redis',
    HERMOD_REDIS_URL: REDIS_URL,
    HERMOD_REDIS_PREFIX: prefix,
    HERMOD_BUS_PARTITIONS: '2',
    HERMOD_DATA_DIR: dataDir,
    HERMOD_CORE_ADDRESS: '127.0.0.1:0',
    HERMOD_METRICS_PORT: '0',
    HERMOD_HOST: '127.0.0.1',
    HERMOD_BOOTSTRAP_APP: 'kāinga',
    HERMOD_BOOTSTRAP_PASSWORD: 'pā💥',
  });

  it('refuses to start with the same HERMOD_CORE_INSTANCE, exit code 2 and a line naming the first core, while the first goes on', async () => {
    const first = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-core-a-')), 'dātā');
    processes.push(await startRole(['core'], envOf(first), '"msg":"core listening"'));
    const second = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-core-b-'));
    const refused = await startRole(['core'], envOf(second), '"msg":"core listening"').then(
      (p) => (processes.push(p), 'started'),
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/exited with 2 while starting/);
    expect(refused).toMatch(/configuration error: HERMOD_CORE_INSTANCE: another core runs as 0 on this deployment/);
    expect(refused).toContain(first);
    // It waited for the lease first, saying so, in case the first core had been killed.
    expect(refused).toMatch(/another core holds a lease this core needs/);
    // And it refused before it read anything of the bus or logged listening.
    expect(refused).not.toMatch(/core listening/);
  }, 90_000);
});
