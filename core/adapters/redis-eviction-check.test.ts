import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../lib/log';
import { enginesRequired } from '../../test/support/engines-required';
import { freePort } from '../../test/support/free-port';
import { warnUnlessNoEviction } from './redis-eviction-check';

// A redis-server of the test's own: skipped with the reason where there is none, except in CI, where it must run.
const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
const missing = probe.error || probe.status !== 0 ? `redis-server does not run here (${probe.error?.message ?? probe.stderr})` : undefined;
if (missing && !enginesRequired) console.warn(`skipping the eviction warning tests: ${missing}`);
const describeWithRedis = missing && !enginesRequired ? describe.skip : describe;

/** A redis-server of its own with this eviction policy and memory limit, nothing persisted. */
async function redisWithPolicy(policy: string, maxmemory = '64mb'): Promise<{ client: Redis; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--maxmemory', maxmemory, '--maxmemory-policy', policy], {
    stdio: 'ignore',
  });
  // Until the server listens, connecting is refused: ioredis keeps trying (every 50 ms), and the first PING answers once it is up.
  const client = new Redis({ port, host: '127.0.0.1', retryStrategy: () => 50 });
  client.on('error', () => undefined);
  await client.ping();
  return { client, child };
}

const recording = (): Logger & { warnings: string[] } => {
  const warnings: string[] = [];
  const none = (): void => undefined;
  return { warnings, debug: none, info: none, error: none, warn: (m: string) => void warnings.push(m), child: () => recording() } as unknown as Logger & {
    warnings: string[];
  };
};

describeWithRedis("the warning about a Redis that may evict hermod's hot state", () => {
  const started: { client: Redis; child: ChildProcess }[] = [];
  afterAll(() => {
    for (const s of started) {
      s.client.disconnect();
      s.child.kill('SIGKILL');
    }
  });

  it('warns when Redis evicts keys under memory pressure (allkeys-lru), naming the policy to set', async () => {
    const r = await redisWithPolicy('allkeys-lru');
    started.push(r);
    const log = recording();
    await warnUnlessNoEviction(r.client, log);
    expect(log.warnings).toHaveLength(1);
    expect(log.warnings[0]).toMatch(/maxmemory-policy allkeys-lru.*noeviction/);
  });

  it('says nothing when Redis has no memory limit, so evicts nothing whatever its policy', async () => {
    const r = await redisWithPolicy('allkeys-lru', '0');
    started.push(r);
    const log = recording();
    await warnUnlessNoEviction(r.client, log);
    expect(log.warnings).toEqual([]);
  });

  it('says nothing when Redis never evicts (noeviction)', async () => {
    const r = await redisWithPolicy('noeviction');
    started.push(r);
    const log = recording();
    await warnUnlessNoEviction(r.client, log);
    expect(log.warnings).toEqual([]);
  });
});
