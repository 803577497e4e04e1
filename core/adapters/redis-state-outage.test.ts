import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../test/support/free-port';
import { eventually } from '../../test/support/eventually';
import { createLogger } from '../../lib/log';
import type { HotState } from '../ports/state';
import { createRedisState } from './redis-state';
import { startRedisServer } from '../../test/support/redis-server';

describe('Redis hot state while its Redis is down', () => {
  const stops: (() => unknown)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  it('refuses at once as unavailable once the connection it had is lost, rather than hold each caller for its timeouts, and serves again when Redis is back', async () => {
    const port = await freePort();
    let server = await startRedisServer(port);
    stops.push(() => server.kill('SIGKILL'));
    const state: HotState = createRedisState({ redis: `redis://127.0.0.1:${port}`, prefix: `outage-${port}`, log: createLogger({ test: 'redis-outage' }) });
    stops.push(() => state.close());
    await state.advanceStatuses([{ id: 'tēnā-1', status: 'accepted', at: 1 }]);

    server.kill('SIGKILL');
    await once(server, 'exit');
    // A command on its way as Redis went is told when its timeout passes; the client then knows the connection is gone.
    await eventually(async () => ((await state.getStatus('tēnā-1').catch((err: { code?: string }) => err.code)) === 'unavailable' ? true : undefined), 15_000);
    // Each call as a gateway's request would make it, one after the other: each is told at once, none waits 5–10 s.
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      await expect(state.getStatus('tēnā-1')).rejects.toMatchObject({ code: 'unavailable' });
      expect(Date.now() - started).toBeLessThan(1000);
    }

    server = await startRedisServer(port);
    await eventually(
      async () => ((await state.advanceStatuses([{ id: 'tēnā-2', status: 'accepted', at: 2 }]).catch(() => undefined)) ? true : undefined),
      20_000,
    );
    expect((await state.getStatus('tēnā-2'))?.status).toBe('accepted');
  }, 60_000);

  it('refuses at once while a Redis that keeps its connections open does not answer, once one command has waited its timeout, and serves again as soon as it answers', async () => {
    const port = await freePort();
    const server = await startRedisServer(port);
    stops.push(() => server.kill('SIGKILL'));
    const state: HotState = createRedisState({
      redis: `redis://127.0.0.1:${port}`,
      prefix: `stall-${port}`,
      commandTimeoutMs: 2000,
      log: createLogger({ test: 'redis-stall' }),
    });
    stops.push(() => state.close());
    await state.advanceStatuses([{ id: 'kōrero-1', status: 'accepted', at: 1 }]);

    // Paused (swapping, a long script, SIGSTOP): the connection stays open and nothing answers.
    server.kill('SIGSTOP');
    stops.push(() => server.kill('SIGCONT'));
    const first = Date.now();
    await expect(state.getStatus('kōrero-1')).rejects.toMatchObject({ code: 'unavailable' });
    // Its own timeout (2 s), behind at most one auto-pipeline's.
    expect(Date.now() - first).toBeLessThan(4500);
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      await expect(state.getStatus('kōrero-1')).rejects.toMatchObject({ code: 'unavailable' });
      expect(Date.now() - started).toBeLessThan(500);
    }

    server.kill('SIGCONT');
    const resumed = Date.now();
    await eventually(async () => ((await state.getStatus('kōrero-1').catch(() => undefined))?.status === 'accepted' ? true : undefined), 10_000, 50);
    expect(Date.now() - resumed).toBeLessThan(3000);
  }, 60_000);
});
