import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeRedis, openRedisClient, sendAll } from '../core/adapters/redis-connection';
import { parseRedisClusterUrl } from '../lib/config';
import type { Logger } from '../lib/log';
import { eventually } from './support/eventually';
import { redisClusterUnavailable, startRedisCluster, type LocalRedisCluster } from './support/redis-cluster';

const describeCluster = redisClusterUnavailable() ? describe.skip : describe;

/** A logger that keeps what it is told. */
function keptLog() {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (msg: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, msg, fields });
  const log = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log } as unknown as Logger;
  return { log, lines };
}

describeCluster('Redis Cluster failover, as an operator reads it in the log', () => {
  let cluster: LocalRedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  });
  afterAll(async () => cluster?.stop());

  it('names the master that died once, as it leaves the cluster map, and says nothing at a clean close', async () => {
    const { log, lines } = keptLog();
    const client = openRedisClient({ cluster: parseRedisClusterUrl(cluster.url) }, { enableAutoPipelining: true }, log);
    const key = 'tēnā-koe:{kī}';
    await sendAll(client, [() => client.set(key, '1')]);
    const master = await cluster.masterOf(key);
    cluster.kill9(master);
    await cluster.waitForFailover(master);
    await eventually(async () => ((await sendAll(client, [() => client.get(key)]).catch(() => [])).length > 0 ? true : undefined), 20_000);
    const said = (msg: string) => lines.filter((l) => l.msg === msg && l.fields.redis === `127.0.0.1:${master}`);
    await eventually(() => (said('redis node left the cluster map').length > 0 ? true : undefined), 20_000);
    expect(said('redis node left the cluster map').map((l) => l.level)).toEqual(['warn']);
    // A node's errors, where the client met them, are said once per node and error, not once per retry.
    const errors = lines.filter((l) => l.msg === 'redis node error');
    expect(new Set(errors.map((l) => `${l.fields.redis} ${String(l.fields.err)}`)).size).toBe(errors.length);
    const before = lines.length;
    await closeRedis(client);
    await new Promise((r) => setTimeout(r, 200));
    expect(lines.slice(before).filter((l) => l.level === 'warn')).toEqual([]);
  }, 60_000);
});
