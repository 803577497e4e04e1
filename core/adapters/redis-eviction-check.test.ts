import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../lib/log';
import { freePort } from '../../test/support/free-port';
import { warnUnlessNoEviction } from './redis-eviction-check';

/** A redis-server of its own with this eviction policy, nothing persisted. */
async function redisWithPolicy(policy: string): Promise<{ client: Redis; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--maxmemory', '64mb', '--maxmemory-policy', policy], {
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

describe("the warning about a Redis that may evict hermod's hot state", () => {
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

  it('says nothing when Redis never evicts (noeviction)', async () => {
    const r = await redisWithPolicy('noeviction');
    started.push(r);
    const log = recording();
    await warnUnlessNoEviction(r.client, log);
    expect(log.warnings).toEqual([]);
  });
});
