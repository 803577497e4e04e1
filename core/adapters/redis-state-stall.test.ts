import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../lib/log';
import { enginesRequired } from '../../test/support/engines-required';
import { freePort } from '../../test/support/free-port';
import { createRedisState } from './redis-state';
import { eventually } from '../../test/support/eventually';

const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
const missing = probe.error || probe.status !== 0 ? `redis-server does not run here (${probe.error?.message ?? probe.stderr})` : undefined;
if (missing && !enginesRequired) console.warn(`skipping the stalled Redis tests: ${missing}`);
const describeWithRedis = missing && !enginesRequired ? describe.skip : describe;

describeWithRedis('hot state on a Redis that stalls (SIGSTOP: its connections stay open, nothing answers)', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child?.pid) process.kill(child.pid, 'SIGCONT');
    child?.kill('SIGKILL');
  });

  it('fails a command as unavailable within its timeout, says so once in the log, and works again once Redis answers', async () => {
    const port = await freePort();
    child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const probeClient = new Redis({ port, host: '127.0.0.1', retryStrategy: () => 50 });
    probeClient.on('error', () => undefined);
    await probeClient.ping();
    probeClient.disconnect();

    const warnings: { msg: string; fields: Record<string, unknown> }[] = [];
    const log = {
      debug: () => undefined,
      info: () => undefined,
      error: () => undefined,
      warn: (msg: string, fields = {}) => void warnings.push({ msg, fields }),
    };
    const state = createRedisState({
      redis: `redis://127.0.0.1:${port}`,
      prefix: 'stall',
      commandTimeoutMs: 500,
      waitTimeoutMs: 0,
      log: { ...log, child: () => log } as unknown as Logger,
    });
    expect(await state.advanceStatuses([{ id: 'tēnā-1', status: 'accepted', at: 1 }])).toEqual([true]);

    process.kill(child.pid!, 'SIGSTOP');
    const started = Date.now();
    const tries = await Promise.allSettled([1, 2, 3].map((i) => state.advanceStatuses([{ id: `tēnā-${i}`, status: 'queued', at: 2 }])));
    expect(Date.now() - started).toBeLessThan(3000);
    for (const t of tries)
      expect(t).toMatchObject({ status: 'rejected', reason: { code: 'unavailable', message: expect.stringMatching(/Redis did not answer within 1000 ms/) } });
    expect(warnings.filter((w) => w.msg === 'redis did not answer in time')).toHaveLength(1);

    // Refused until a PING sent behind the stalled commands is answered: within moments of Redis answering again.
    process.kill(child.pid!, 'SIGCONT');
    const resumed = Date.now();
    await eventually(async () => ((await state.getStatus('tēnā-1').catch(() => undefined))?.status === 'queued' ? true : undefined), 5000, 20);
    expect(Date.now() - resumed).toBeLessThan(1000);
    await state.close();
  }, 30_000);
});
