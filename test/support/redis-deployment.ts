import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSmscSimulator } from '../../workers/simulators/smsc-simulator';
import { freePort } from './free-port';
import { createClient } from './https-client';
import { startRole, type RoleProcess } from './role-process';
import { startRedisServer } from './redis-server';
import { rolesOnRedisEnv } from './roles-on-redis-env';

export type RedisDeployment = Awaited<ReturnType<typeof startRedisDeployment>>;

/**
 * A Redis of a test's own on a free port (no persistence), an SMSC simulator, a data directory, and roles started
 * one process each on them (rolesOnRedisEnv); everything is stopped and removed through `cleanup`, which the test
 * runs last-in first-out after its tests.
 */
export async function startRedisDeployment(o: { receiptDelayMs: number; dataDirPrefix: string; env?: Record<string, string>; cleanup: (() => unknown)[] }) {
  const { cleanup } = o;
  const redisPort = await freePort();
  let redis = await startRedisServer(redisPort);
  cleanup.push(() => redis.kill('SIGKILL'));
  const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: o.receiptDelayMs });
  const { port: smscPort } = await simulator.start();
  cleanup.push(() => simulator.stop());
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), o.dataDirPrefix));
  cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const env = { ...rolesOnRedisEnv({ redisPort, smscPort, dataDir }), ...o.env };
  const roles: RoleProcess[] = [];
  cleanup.push(() => Promise.all(roles.map((r) => r.stop())));
  const role = async (args: string[], readyText: string, extra: Record<string, string> = {}): Promise<RoleProcess> => {
    const started = await startRole(args, { ...env, ...extra }, readyText);
    roles.push(started);
    return started;
  };
  return {
    simulator,
    env,
    dataDir,
    redisPort,
    /** Started, and stopped with the test's cleanup. */
    role,
    /** A gateway of `core` and an HTTPS client of it as acme. */
    gateway: async (core: RoleProcess) => {
      const gateway = await role(['gateway'], '"msg":"gateway listening"', {
        HERMOD_CORE_ADDRESS: core.ready.grpc,
        HERMOD_HTTPS_PORT: '0',
        HERMOD_HTTP_PORT: '0',
      });
      const client = createClient(gateway.ready.https, fs.readFileSync(path.join(dataDir, 'tls/self-signed.crt'), 'utf8'), { user: 'acme', pass: 'secret' });
      cleanup.push(() => client.close());
      return { gateway, client };
    },
    /** Redis killed and started again on its port without its data, its streams gone with everything else. */
    restartRedisEmpty: async () => {
      redis.kill('SIGKILL');
      await once(redis, 'exit');
      redis = await startRedisServer(redisPort);
    },
  };
}
