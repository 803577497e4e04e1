import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openState } from '../core/adapters/open-adapters';
import { hashSlot } from '../core/adapters/redis-connection';
import { tagsAcrossSlots } from '../core/adapters/redis-loss-markers';
import { createRedisState } from '../core/adapters/redis-state';
import { describeStateContract } from '../core/adapters/state-contract';
import type { MessageStatus } from '../core/domain/message-status';
import type { HotState } from '../core/ports/state';
import { parseRedisClusterUrl, resolveConfig } from '../lib/config';
import { redisClusterUnavailable, startRedisCluster, type LocalRedisCluster } from './support/redis-cluster';
import { enginesRequired } from './support/engines-required';
import { randomPrefix } from './support/redis-keys';

/**
 * Hot state on a real Redis Cluster (three masters, one replica each, started
 * here from redis-server). Without redis-server and redis-cli the file skips
 * with the reason, except in CI, where it fails: there the cluster must run.
 */
const missing = redisClusterUnavailable();
if (missing && enginesRequired) {
  describe('Redis Cluster hot state', () => {
    it('has redis-server and redis-cli to start a cluster with', () => {
      throw new Error(`cannot run the Redis Cluster tests in CI: ${missing}`);
    });
  });
} else if (missing) {
  console.warn(`skipping the Redis Cluster tests: ${missing}`);
}
const describeCluster = missing ? describe.skip : describe;

const statusKey = (prefix: string, id: string): string => `${prefix}:msg:{${id}}:status`;

describeCluster('Redis Cluster hot state', () => {
  let cluster: LocalRedisCluster;
  const open: HotState[] = [];
  beforeAll(async () => {
    cluster = await startRedisCluster();
  });
  afterAll(async () => {
    await Promise.all(open.map((s) => s.close()));
    await cluster?.stop();
  });

  // Through the documented variables and the one place that opens adapters, as `hermod core` does.
  describeStateContract('Redis Cluster (HERMOD_REDIS_CLUSTER=true)', () => {
    const config = resolveConfig({
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_CLUSTER: 'true',
      HERMOD_REDIS_URL: cluster.url,
      HERMOD_REDIS_PREFIX: randomPrefix('cluster'),
    });
    return openState(config.adapters);
  });

  it('tells every core that one master came back without its data, whichever core finds it first', async () => {
    const prefix = randomPrefix('cluster');
    const [a, b] = [prefix, prefix].map((p) => createRedisState({ redis: { cluster: parseRedisClusterUrl(cluster.url) }, prefix: p }));
    open.push(a!, b!);
    // The first core to look finds a new deployment's Cluster empty.
    expect([await a!.dataLost(), await b!.dataLost()]).toEqual([true, false]);
    const masters = await cluster.masters();
    // Each master holds some of the markers: whichever restarts empty loses one.
    for (const m of masters)
      expect(
        tagsAcrossSlots(64).some((tag) => m.serves(hashSlot(`{${tag}}`))),
        String(m.port),
      ).toBe(true);
    const victim = masters[1]!;
    const direct = new Redis(victim.port, '127.0.0.1');
    try {
      const markers = await direct.keys(`${prefix}:intact:*`);
      expect(markers.length).toBeGreaterThan(0);
      // That master's keys of this prefix go, as in a restart without its data (the other tests' keys stay).
      for (const key of markers) await direct.del(key);
    } finally {
      direct.disconnect();
    }
    expect(await a!.dataLost()).toBe(true);
    expect(await b!.dataLost()).toBe(true);
    expect([await a!.dataLost(), await b!.dataLost()]).toEqual([false, false]);
  });

  it('advances one batch of statuses whose messages live on all three masters', async () => {
    const prefix = randomPrefix('cluster');
    const state = createRedisState({ redis: { cluster: parseRedisClusterUrl(cluster.url) }, prefix, waitReplicas: 1 });
    open.push(state);
    const ids = Array.from({ length: 60 }, () => randomUUID());
    const masters = await cluster.masters();
    const owners = new Set(ids.map((id) => masters.find((m) => m.serves(hashSlot(statusKey(prefix, id))))!.port));
    expect(owners.size).toBe(3);

    expect(await state.advanceStatuses(ids.map((id, i) => ({ id, status: 'queued', at: i })))).toEqual(ids.map(() => true));
    // A second batch mixing repeats and moves, across every slot, keeps per-message order.
    const second = ids.flatMap((id, i) => [
      { id, status: 'queued' as const, at: 1000 + i },
      { id, status: 'sent' as const, at: 2000 + i },
    ]);
    expect(await state.advanceStatuses(second)).toEqual(ids.flatMap(() => [false, true]));
    for (const [i, id] of ids.entries()) expect(await state.getStatus(id)).toEqual({ status: 'sent', at: 2000 + i });
  });

  it('refuses to screen against opt-outs and block lists held by a master that lost its data while the other masters kept theirs', async () => {
    const prefix = randomPrefix('cluster');
    const state = createRedisState({ redis: { cluster: parseRedisClusterUrl(cluster.url) }, prefix, waitReplicas: 1 });
    open.push(state);
    const masters = await cluster.masters();
    const portOf = (key: string): number => masters.find((m) => m.serves(hashSlot(key)))!.port;
    // An application whose lists live on another master than where a single screening marker for the whole state would.
    let app = '';
    do app = `Ngā Kōrero ${randomUUID()}`;
    while (portOf(`${prefix}:optout:{${app}}`) === portOf(`${prefix}:screening-loaded`));
    const handset = '+64211234567';
    const scopes = ['', app];
    const load = async (): Promise<boolean> => {
      const token = await state.beginScreeningLoad(scopes);
      await state.setOptOuts([{ applicationId: app, handset, optedOut: true }]);
      await state.setBlocks([{ scope: app, prefix: '+6427999', blocked: true }]);
      return state.markScreeningLoaded(scopes, token);
    };
    expect(await load()).toBe(true);
    expect(await state.areOptedOut([{ applicationId: app, handset }])).toEqual([true]);

    // That master restarts empty (its replica with it).
    const lost = portOf(`${prefix}:optout:{${app}}`);
    const admin = new Redis({ host: '127.0.0.1', port: lost });
    try {
      await admin.flushall();
    } finally {
      admin.disconnect();
    }
    await expect(state.areOptedOut([{ applicationId: app, handset }])).rejects.toMatchObject({ code: 'unavailable', retryable: true });
    await expect(state.findBlocks([{ applicationId: app, destination: '+64279990001' }])).rejects.toMatchObject({ code: 'unavailable', retryable: true });
    // Lost: the scopes whose slots that master served (the global list's too, if it was there), and no other.
    expect(await state.screeningMissing(scopes)).toEqual(scopes.filter((scope) => portOf(`${prefix}:optout:{${scope || '*'}}`) === lost));
    // Loaded again, as core does within a second of seeing it.
    expect(await load()).toBe(true);
    expect(await state.areOptedOut([{ applicationId: app, handset }])).toEqual([true]);
    expect(await state.findBlocks([{ applicationId: app, destination: '+64279990001' }])).toEqual(['+6427999']);
  });

  it('computes the same hash slot as Redis for any key, braces and non-ASCII included', async () => {
    const redis = new Redis({ host: '127.0.0.1', port: cluster.ports[0]! });
    try {
      const samples = ['Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽🎉', '{user1000}.following', 'foo{}{bar}', 'foo{{bar}}zap', '{}', ''];
      const keys = [
        ...samples,
        ...fc.sample(
          fc.tuple(fc.string({ unit: 'grapheme' }), fc.constantFrom('', '{', '}', '{}'), fc.string()).map((parts) => parts.join('')),
          300,
        ),
      ];
      for (const key of keys) expect(hashSlot(key), JSON.stringify(key)).toBe(Number(await redis.call('CLUSTER', 'KEYSLOT', key)));
    } finally {
      redis.disconnect();
    }
  });
});

describeCluster('Redis Cluster hot state when a master dies', () => {
  let cluster: LocalRedisCluster;
  const open: HotState[] = [];
  /** Masters not yet killed by a test here, each still with its replica. */
  const healthy = new Set<number>();
  beforeAll(async () => {
    cluster = await startRedisCluster({ nodeTimeoutMs: 1000 });
    for (const m of await cluster.masters()) healthy.add(m.port);
  });
  afterAll(async () => {
    await Promise.all(open.map((s) => s.close()));
    await cluster?.stop();
  });

  // Generous waits where the replica is meant to confirm (a busy machine); short where it cannot.
  const state = (prefix: string, waitReplicas: number, waitTimeoutMs = 10_000): HotState => {
    const s = createRedisState({ redis: { cluster: parseRedisClusterUrl(cluster.url) }, prefix, waitReplicas, waitTimeoutMs });
    open.push(s);
    return s;
  };
  /** A healthy master (taken out of the set) and `count` UUIDs whose status keys it serves. */
  const idsOnOneMaster = async (prefix: string, count: number): Promise<{ master: number; ids: string[] }> => {
    const master = healthy.values().next().value!;
    healthy.delete(master);
    const serves = (await cluster.masters()).find((m) => m.port === master)!.serves;
    const ids: string[] = [];
    while (ids.length < count) {
      const id = randomUUID();
      if (serves(hashSlot(statusKey(prefix, id)))) ids.push(id);
    }
    return { master, ids };
  };
  const readAll = (s: HotState, ids: string[]) => Promise.all(ids.map((id) => s.getStatus(id)));

  it("answers a message's status advances in the order it applied them, though the earlier batch waits longer for another master's replica, and other messages without waiting", async () => {
    const prefix = randomPrefix('cluster');
    const s = state(prefix, 1);
    const [fast, slow] = await cluster.masters();
    const idOn = (master: { serves(slot: number): boolean }): string => {
      for (;;) {
        const id = randomUUID();
        if (master.serves(hashSlot(statusKey(prefix, id)))) return id;
      }
    };
    const [message, other] = [idOn(fast!), idOn(slow!)];
    const replica = await cluster.replicaOf(slow!.port);
    const answered: string[] = [];
    cluster.pause(replica);
    try {
      // Intake's `queued` for a batch across two masters, then the worker's `sent` for one of its messages.
      const queued = s.advanceStatusesNotingSkips([
        { id: other, status: 'queued', at: 1 },
        { id: message, status: 'queued', at: 1 },
      ]);
      void queued.then(() => answered.push('queued'));
      const sent = s.advanceStatusesNotingSkips([{ id: message, status: 'sent', at: 2 }]);
      void sent.then(() => answered.push('sent'));
      // Another message on the healthy master is answered meanwhile: only a message's own earlier advances hold it.
      const another = idOn(fast!);
      expect(await s.advanceStatusesNotingSkips([{ id: another, status: 'queued', at: 1 }])).toEqual([1]);
      expect(answered).toEqual([]);
      await new Promise((r) => setTimeout(r, 300));
      cluster.resume(replica);
      expect(await Promise.all([queued, sent])).toEqual([[1, 1], [3]]); // sent right after queued: ADVANCE_AFTER_QUEUED
      await new Promise((r) => setImmediate(r));
      // The status recorder tells a message's changes in the order hot state answers them: queued, then sent.
      expect(answered).toEqual(['queued', 'sent']);
    } finally {
      cluster.resume(replica);
    }
  });

  it('keeps every status acknowledged just before its master is killed (kill -9), and takes new writes after its replica took over', async () => {
    const prefix = randomPrefix('cluster');
    const s = state(prefix, 1);
    const { master, ids: onVictim } = await idsOnOneMaster(prefix, 100);
    const elsewhere = Array.from({ length: 200 }, () => randomUUID());
    const ids = [...onVictim, ...elsewhere];
    const statuses: MessageStatus[] = ['accepted', 'queued', 'sent', 'submitted'];
    const want = new Map<string, { status: MessageStatus; at: number }>();
    // Several batches, each one acknowledged before the next; the master dies the instant the last one is.
    for (let b = 0; b < 10; b++) {
      const batch = ids.filter((_, i) => i % 10 === b).map((id, i) => ({ id, status: statuses[(b + i) % statuses.length]!, at: 1_700_000_000_000 + b }));
      expect(await s.advanceStatuses(batch)).toEqual(batch.map(() => true));
      for (const a of batch) want.set(a.id, { status: a.status, at: a.at });
    }
    cluster.kill9(master);
    await cluster.waitForFailover(master);

    const after = await readAll(s, ids);
    const lost = ids.filter((id, i) => JSON.stringify(after[i]) !== JSON.stringify(want.get(id)));
    const owners = await cluster.masters();
    const detail = lost
      .slice(0, 5)
      .map(
        (id) =>
          `${id} on ${owners.find((m) => m.serves(hashSlot(statusKey(prefix, id))))?.port} (was ${onVictim.includes(id) ? 'victim' : '?'}): got ${JSON.stringify(after[ids.indexOf(id)])}`,
      );
    expect(lost, `${lost.length} of ${ids.length} acknowledged statuses lost, e.g. ${detail.join('; ')}\n${await cluster.logs()}`).toEqual([]);

    // The promoted replica takes writes (it has no replica of its own now, so nothing to wait for there).
    expect(await s.advanceStatuses(ids.map((id, i) => ({ id, status: 'received', at: 1_800_000_000_000 + i })))).toEqual(ids.map(() => true));
    expect(await readAll(s, ids)).toEqual(ids.map((_, i) => ({ status: 'received', at: 1_800_000_000_000 + i })));
  });

  it('holds back the acknowledgement while the replica has not taken a write, and what it then acknowledges survives the master', async () => {
    const prefix = randomPrefix('cluster');
    const s = state(prefix, 1);
    const { master, ids } = await idsOnOneMaster(prefix, 50);
    const replica = await cluster.replicaOf(master);

    cluster.pause(replica);
    let acknowledged = false;
    const writing = s.advanceStatuses(ids.map((id, i) => ({ id, status: 'submitted', at: i }))).then((r) => {
      acknowledged = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    // The master has applied them, but the replica has not confirmed: not acknowledged yet.
    expect(acknowledged).toBe(false);
    cluster.resume(replica);
    expect(await writing).toEqual(ids.map(() => true));
    cluster.kill9(master);
    await cluster.waitForFailover(master);

    expect(await readAll(s, ids)).toEqual(ids.map((_, i) => ({ status: 'submitted', at: i })));
  });

  it('refuses to acknowledge (unavailable) a write its replica never got, where a client not waiting for replicas is told done and loses it with the master', async () => {
    const prefix = randomPrefix('cluster');
    const waiting = state(prefix, 1, 1000);
    const notWaiting = state(prefix, 0);
    const { master, ids } = await idsOnOneMaster(prefix, 40);
    const [refused, told] = [ids.slice(0, 20), ids.slice(20)];
    const replica = await cluster.replicaOf(master);

    // Cut the replica off: stopped, and its replication link closed by the master, so nothing more reaches it.
    cluster.pause(replica);
    const admin = new Redis({ host: '127.0.0.1', port: master });
    try {
      await admin.call('CLIENT', 'KILL', 'TYPE', 'replica');
    } finally {
      admin.disconnect();
    }

    await expect(waiting.advanceStatuses(refused.map((id) => ({ id, status: 'sent', at: 1 })))).rejects.toMatchObject({ code: 'unavailable' });
    expect(await notWaiting.advanceStatuses(told.map((id) => ({ id, status: 'sent', at: 1 })))).toEqual(told.map(() => true));

    cluster.kill9(master);
    cluster.resume(replica);
    await cluster.waitForFailover(master);
    // The promoted replica never saw either batch: the refused one was never promised, the other was.
    expect(await readAll(waiting, told)).toEqual(told.map(() => undefined));
  });
});
