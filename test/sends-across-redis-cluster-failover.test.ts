import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enginesRequired } from './support/engines-required';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import type { Reply } from './support/https-client';
import { redisClusterUnavailable, startRedisCluster, type LocalRedisCluster } from './support/redis-cluster';
import { randomPrefix } from './support/redis-keys';

const CLIENTS = 32;
const SEND_FOR_MS = 10_000;
const KILL_AFTER_MS = 2000;
const KILL_EVERY_MS = 1500;

/**
 * hermod with hot state on a real Redis Cluster, sending SMS through Gateway
 * v2 while each of the cluster's masters in turn is killed (-9) and its
 * replica takes over. A client relies on two things: a send answered 202 is sent, without
 * anyone restarting hermod; and a send answered 503 that it retries with its
 * Idempotency-Key until 202 is sent exactly once.
 */
const missing = redisClusterUnavailable();
if (missing && enginesRequired) {
  describe('sends across a Redis Cluster failover', () => {
    it('has redis-server and redis-cli to start a cluster with', () => {
      throw new Error(`cannot run the Redis Cluster failover test in CI: ${missing}`);
    });
  });
} else if (missing) {
  console.warn(`skipping the Redis Cluster failover test: ${missing}`);
}
const describeCluster = missing ? describe.skip : describe;

describeCluster('sends across a Redis Cluster failover', () => {
  let cluster: LocalRedisCluster;
  let h: HermodWithSimulator;
  /** Submits the SMSC saw, by text (each send's text is its own). */
  const submits = new Map<string, number>();

  beforeAll(async () => {
    cluster = await startRedisCluster({ nodeTimeoutMs: 1000 });
    h = await startHermodWithSimulator('redis-cluster-failover', {
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_CLUSTER: 'true',
      HERMOD_REDIS_URL: cluster.url,
      HERMOD_REDIS_PREFIX: randomPrefix('cluster-failover'),
    });
    h.simulator.on('submit', (s) => submits.set(s.text, (submits.get(s.text) ?? 0) + 1));
  }, 120_000);

  afterAll(async () => {
    await h?.stop();
    await cluster?.stop();
  }, 60_000);

  it('sends every message answered 202, and every 503 retried with its key exactly once, while masters fail over, without a restart', async () => {
    // Each text its own, in te reo Māori with emoji and CJK, short enough for one UCS-2 part.
    const textOf = (i: number): string => `Tēnā koe, e Hēmi 🌿 你好 #${i}`;
    const keyOf = (i: number): string | undefined => (i % 3 !== 0 ? `tuku-${i}` : undefined);
    const send = (i: number): Promise<Reply | undefined> => {
      const key = keyOf(i);
      return h.client
        .post('/rest/sms/v2/messages', { destination: `+6421880${String(i).padStart(4, '0')}`, content: textOf(i) }, key ? { 'idempotency-key': key } : {})
        .catch(() => undefined);
    };

    const masters = (await cluster.masters()).map((m) => m.port);
    const started = Date.now();
    const answers: (Reply | undefined)[] = [];
    let next = 0;
    let failoverDone = false;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // Each master in turn dies while sends are on their way, once the cluster is whole again after the last.
    const failedOver = (async () => {
      await sleep(KILL_AFTER_MS);
      for (const master of masters) {
        cluster.kill9(master);
        await cluster.waitForFailover(master);
        await sleep(KILL_EVERY_MS);
      }
      failoverDone = true;
    })();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (Date.now() - started < SEND_FOR_MS || !failoverDone) {
          const i = next++;
          answers[i] = await send(i);
        }
      }),
    );
    await failedOver;

    const accepted = answers.flatMap((r, i) => (r?.status === 202 ? [i] : []));
    const refusedWithKey = answers.flatMap((r, i) => (r?.status !== 202 && keyOf(i) ? [i] : []));
    const unexpected = answers.flatMap((r, i) => (r === undefined || r.status === 202 || r.status === 503 ? [] : [`#${i}: ${r.status} ${r.text}`]));
    expect(unexpected).toEqual([]);

    // Each client retries a keyed send not answered 202 with the same key, until it is.
    await Promise.all(
      refusedWithKey.map((i) =>
        eventually(
          async () => {
            const r = await send(i);
            if (r?.status !== 202) throw new Error(`#${i} retried: ${r?.status} ${r?.text}`);
            return true;
          },
          30_000,
          250,
        ),
      ),
    );

    const owed = [...accepted, ...refusedWithKey];
    const unsent = (): number[] => owed.filter((i) => !submits.has(textOf(i)));
    await eventually(() => unsent().length === 0, 60_000, 200).catch(() => undefined);
    const summary = (list: number[]): string => `${list.length} (${list.slice(0, 10).join(', ')})`;
    expect(`${answers.length} sends, ${refusedWithKey.length} retried with their key; never sent: ${summary(unsent())}`).toBe(
      `${answers.length} sends, ${refusedWithKey.length} retried with their key; never sent: 0 ()`,
    );
    await new Promise((r) => setTimeout(r, 2000)); // a second submit would have come by now
    const twice = [...submits].filter(([, n]) => n > 1).map(([text]) => text);
    expect(twice).toEqual([]);
  }, 150_000);
});
