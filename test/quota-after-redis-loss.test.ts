import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { freePort } from './support/free-port';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import { startRedisServer } from './support/redis-server';

/** hermod with hot state on a Redis of the test's own, without persistence: stopped and started again, it is empty. */
describe('a quota on a Redis that comes back empty', () => {
  const cleanup: (() => unknown)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await Promise.resolve(c()).catch(() => undefined);
  });

  it('goes on counting the period from the sends history has, instead of starting it over', async () => {
    const redisPort = await freePort();
    let redis = await startRedisServer(redisPort);
    cleanup.push(() => redis.kill('SIGKILL'));
    const h: HermodWithSimulator = await startHermodWithSimulator('quota-redis-loss', {
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      HERMOD_REDIS_PREFIX: 'pūtea',
    });
    cleanup.push(() => h.stop());
    const set = await h.hermod.cli(['apps', 'set-quota', 'acme', '--messages', '5', '--per', 'day']);
    expect(set.code, set.output).toBe(0);
    const send = async (i: number) => {
      const r = await h.client.post('/rest/sms/v2/messages', {
        destination: `+64212${String(i).padStart(6, '0')}`,
        content: `Kia ora ${i}, e hoa mā — 你好 👋🏽`,
      });
      expect(r.status, r.text).toBe(202);
      return String(r.json.id);
    };
    const finalOf = (id: string) =>
      eventually(async () => {
        const { status } = (await h.client.get(`/rest/sms/v2/messages?id=${id}`)).json as { status: string };
        return ['received', 'deficient', 'blocked', 'failed'].includes(status) ? status : undefined;
      }, 30_000);
    const first = [await send(1), await send(2), await send(3)];
    expect(await Promise.all(first.map(finalOf))).toEqual(['received', 'received', 'received']);

    // Redis stops and comes back without its keys, the quota's counter among them.
    redis.kill('SIGKILL');
    await once(redis, 'exit');
    redis = await startRedisServer(redisPort);
    await eventually(() => (h.hermod.output().includes('hot state lost data') ? true : undefined), 30_000);

    const after: string[] = [];
    // Sends are refused as retryable while the opt-outs and block lists load again.
    for (const i of [4, 5, 6])
      after.push(
        await eventually(
          async () => {
            const r = await h.client.post('/rest/sms/v2/messages', { destination: `+64212${String(i).padStart(6, '0')}`, content: `Ka kite ${i} — 再见 🌿` });
            return r.status === 202 ? String(r.json.id) : undefined;
          },
          30_000,
          200,
        ),
      );
    expect(await Promise.all(after.map(finalOf))).toEqual(['received', 'received', 'deficient']);
  }, 180_000);
});
