import { afterAll, describe, expect, it } from 'vitest';
import { canAdvance, MESSAGE_STATUSES, stageOf, type MessageStatus } from '../domain/message-status';
import type { HotState } from '../ports/state';
import { unique } from './contract-support';
import { createRedisState } from './redis-state';
import { deleteRedisKeys, randomPrefix, rawRedis, REDIS_URL } from '../../test/support/redis-keys';
import { describeStateContract } from './state-contract';
import { hashedUuid } from '../../lib/uuid';

const prefixes = new Set<string>();
const freshPrefix = (): string => {
  const prefix = randomPrefix();
  prefixes.add(prefix);
  return prefix;
};
// Each prefix is a SCAN of the whole keyspace, which on a Redis shared with other suites takes a while.
afterAll(() => deleteRedisKeys(...prefixes), 120_000);

describeStateContract('Redis', () => createRedisState({ redis: REDIS_URL, prefix: freshPrefix() }));

describe('Redis hot state', () => {
  const open: HotState[] = [];
  const state = (prefix: string, extra: { ttlSeconds?: number; finalTtlSeconds?: number } = {}): HotState => {
    const s = createRedisState({ redis: REDIS_URL, prefix, ...extra });
    open.push(s);
    return s;
  };
  afterAll(async () => {
    await Promise.all(open.map((s) => s.close()));
  });

  it('fails a later advance to its caller, never as an unhandled rejection, while an earlier one of its message still waits for a replica (review)', async () => {
    // No replica here: an advance waits the whole WAIT and then fails, as on a master whose replica lags.
    const s = createRedisState({ redis: REDIS_URL, prefix: freshPrefix(), waitReplicas: 1, waitTimeoutMs: 600 });
    const unhandled: unknown[] = [];
    const note = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      const waiting = s.advanceStatuses([{ id: 'tēnā-1', status: 'queued', at: 1 }]).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 50));
      // The same message again: its answer waits for the first; it fails, and only its caller hears of it.
      const again = s.advanceStatuses([{ id: 'tēnā-1', status: 'sent', at: 2 }]).catch((e: unknown) => e);
      const other = await s.advanceStatuses([{ id: '你好-2', status: 'queued', at: 1 }]).catch((e: unknown) => e);
      expect(other).toMatchObject({ code: 'unavailable' });
      expect(await waiting).toMatchObject({ code: 'unavailable' });
      expect(await again).toMatchObject({ code: 'unavailable' });
      await s.close();
      const closedWaiting = createRedisState({ redis: REDIS_URL, prefix: freshPrefix(), waitReplicas: 1, waitTimeoutMs: 600 });
      const first = closedWaiting.advanceStatuses([{ id: 'kia-ora-3', status: 'queued', at: 1 }]).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 50));
      // Refused at once by the closing state, while the first still waits: its caller hears of it when the first is answered.
      const closing = closedWaiting.close();
      const refused = closedWaiting.advanceStatuses([{ id: 'kia-ora-3', status: 'sent', at: 2 }]).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 20));
      expect(await refused).toMatchObject({ code: 'unavailable' });
      await first;
      await closing;
      await new Promise((r) => setTimeout(r, 100));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', note);
    }
  });

  it("tells every core of a loss of data, whichever core finds it first, and a loss of one Cluster master's slots alike", async () => {
    const prefix = freshPrefix();
    const [a, b] = [state(prefix), state(prefix)];
    const raw = rawRedis();
    try {
      // The first look marks: the core that finds this Redis empty (a new one) is told so, the other is not.
      expect([await a.dataLost(), await b.dataLost()]).toEqual([true, false]);
      expect([await a.dataLost(), await b.dataLost()]).toEqual([false, false]);
      // A master that restarted empty lost the keys of its slots: here, the marker of one range of them.
      const markers = (await raw.keys(`${prefix}:intact:*`)).sort();
      expect(markers).toHaveLength(64);
      await raw.del(markers[37]!);
      // a looks first and puts the marker back; b still learns of the loss.
      expect(await a.dataLost()).toBe(true);
      expect(await b.dataLost()).toBe(true);
      expect([await a.dataLost(), await b.dataLost()]).toEqual([false, false]);
      // A Redis back empty: everything gone, the notice too.
      await deleteRedisKeys(prefix);
      expect([await b.dataLost(), await a.dataLost()]).toEqual([true, true]);
      expect([await a.dataLost(), await b.dataLost()]).toEqual([false, false]);
    } finally {
      raw.disconnect();
    }
  });

  it('tells one of the cores that start together on an empty Redis that it was empty, and none takes it for a later loss (review)', async () => {
    const prefix = freshPrefix();
    const cores = [state(prefix), state(prefix), state(prefix)];
    expect((await Promise.all(cores.map((c) => c.dataLost()))).filter(Boolean)).toHaveLength(1);
    expect(await Promise.all(cores.map((c) => c.dataLost()))).toEqual([false, false, false]);
  });

  it('tells a core that starts on a Redis back empty since the last core looked (an operator restarted it while core was down)', async () => {
    const prefix = freshPrefix();
    const before = state(prefix);
    expect(await before.dataLost()).toBe(true);
    expect(await state(prefix).dataLost()).toBe(false);
    await deleteRedisKeys(prefix);
    expect(await state(prefix).dataLost()).toBe(true);
  });

  it('decides every move exactly as canAdvance does (the stage table in the script matches the domain)', async () => {
    const s = state(freshPrefix());
    const pairs: { current: MessageStatus; next: MessageStatus; channel: string | undefined; id: string }[] = [];
    for (const channel of ['sms', 'email', 'im', 'wab', undefined])
      for (const current of MESSAGE_STATUSES) for (const next of MESSAGE_STATUSES) pairs.push({ current, next, channel, id: unique('m') });
    await s.advanceStatuses(pairs.map((p) => ({ id: p.id, status: p.current, at: 1, channel: p.channel })));
    const applied = await s.advanceStatuses(pairs.map((p) => ({ id: p.id, status: p.next, at: 2, channel: p.channel })));
    pairs.forEach((p, i) => {
      expect(applied[i], `${p.channel}: ${p.current} → ${p.next}`).toBe(canAdvance(p.current, p.next, p.channel));
    });
  });

  it('keeps a message only briefly once its status is final: its status, submit mark and carrier id expire after the final time to live', async () => {
    const prefix = freshPrefix();
    const s = state(prefix, { ttlSeconds: 3600, finalTtlSeconds: 5 });
    const raw = rawRedis();
    try {
      await s.putCarrierIds([{ carrierId: 'c-tēnā', messageId: 'm-final' }]);
      await s.advanceStatuses([{ id: 'm-final', status: 'submitted', at: 1, carrierId: 'c-tēnā' }]);
      const keys = [`${prefix}:msg:{m-final}:status`, `${prefix}:submitted:{m-final}`, `${prefix}:carrier:{c-tēnā}`];
      for (const key of keys) expect(await raw.ttl(key), key).toBeGreaterThan(3000);
      await s.advanceStatuses([{ id: 'm-final', status: 'received', at: 2, carrierId: 'c-tēnā' }]);
      for (const key of keys) {
        const ttl = await raw.ttl(key);
        expect(ttl, key).toBeGreaterThan(0);
        expect(ttl, key).toBeLessThanOrEqual(5);
      }
      // Meanwhile a late duplicate is still refused.
      expect(await s.advanceStatuses([{ id: 'm-final', status: 'submitted', at: 3 }])).toEqual([false]);
    } finally {
      await raw.quit();
    }
  });

  it('keeps the final status of a message sent with an Idempotency-Key for the key’s time to live, so a late retry finds it', async () => {
    const prefix = freshPrefix();
    const s = createRedisState({ redis: REDIS_URL, prefix, ttlSeconds: 7 * 86_400, finalTtlSeconds: 5, keyedFinalTtlSeconds: 86_400 });
    open.push(s);
    const raw = rawRedis();
    try {
      const keyed = hashedUuid('app-1', 'tono-Māori-2');
      // A fixed id: one random id in 1,024 carries the hashed mark, and is kept as long as a keyed one.
      const unkeyed = '6f1c2d3e-0a4b-4c5d-8e6f-7a8b9c0d1e2f';
      await s.advanceStatuses([keyed, unkeyed].map((id) => ({ id, status: 'received' as const, at: 2 })));
      const keyedTtl = await raw.ttl(`${prefix}:msg:{${keyed}}:status`);
      expect(keyedTtl).toBeGreaterThan(86_000);
      expect(keyedTtl).toBeLessThanOrEqual(86_400);
      expect(await raw.ttl(`${prefix}:msg:{${unkeyed}}:status`)).toBeLessThanOrEqual(5);
    } finally {
      await raw.quit();
    }
  });

  it('stores `stage|status|at` under <prefix>:msg:{<id>}:status with the time to live, renewed on each advance', async () => {
    const prefix = freshPrefix();
    const s = state(prefix, { ttlSeconds: 100, finalTtlSeconds: 1000 });
    const raw = rawRedis();
    try {
      await s.advanceStatuses([{ id: 'm1', status: 'submitted', at: 1234 }]);
      const key = `${prefix}:msg:{m1}:status`;
      expect(await raw.get(key)).toBe(`${stageOf('submitted')}|submitted|1234`);
      await raw.expire(key, 5);
      await s.advanceStatuses([{ id: 'm1', status: 'received', at: 1300 }]);
      const ttl = await raw.ttl(key);
      expect(ttl).toBeGreaterThan(90);
      expect(ttl).toBeLessThanOrEqual(100);
      await s.putCarrierIds([{ carrierId: 'c1', messageId: 'm1' }]);
      expect(await raw.get(`${prefix}:carrier:{c1}`)).toBe('m1');
      expect(await raw.ttl(`${prefix}:carrier:{c1}`)).toBeGreaterThan(90);
    } finally {
      await raw.quit();
    }
  });

  it('moves only forward while two clients write the same messages concurrently', async () => {
    const prefix = freshPrefix();
    const one = state(prefix);
    const two = state(prefix);
    const ids = Array.from({ length: 30 }, () => unique('m'));
    const statuses: MessageStatus[] = ['accepted', 'queued', 'sent', 'submitted', 'received', 'read'];
    // Each client sends every status of every message, in a shuffled order, in small batches.
    const plan = (seed: number) => {
      const all = ids.flatMap((id) => statuses.map((status, i) => ({ id, status, at: seed * 100 + i })));
      for (let i = all.length - 1; i > 0; i--) {
        const j = Math.floor(Math.abs(Math.sin(seed * 997 + i)) * (i + 1));
        [all[i], all[j]] = [all[j]!, all[i]!];
      }
      return all;
    };
    const run = async (client: HotState, seed: number) => {
      const advances = plan(seed);
      const applied: { id: string; status: MessageStatus }[] = [];
      const batches = [];
      for (let i = 0; i < advances.length; i += 7) batches.push(advances.slice(i, i + 7));
      await Promise.all(
        batches.map(async (batch) => {
          const result = await client.advanceStatuses(batch);
          batch.forEach((a, i) => {
            result[i] && applied.push({ id: a.id, status: a.status });
          });
        }),
      );
      return applied;
    };
    const [a, b] = await Promise.all([run(one, 1), run(two, 2)]);
    const applied = [...a, ...b];

    for (const id of ids) {
      // Everything ends at `read`, the furthest stage…
      expect((await one.getStatus(id))?.status).toBe('read');
      // …each status was applied at most once across both clients…
      const mine = applied.filter((x) => x.id === id).map((x) => x.status);
      expect(new Set(mine).size).toBe(mine.length);
      // …and `read` exactly once.
      expect(mine.filter((s) => s === 'read')).toHaveLength(1);
    }
  });

  it('shares one allowance between clients of the same store (gateways behind one core, or several cores)', async () => {
    const prefix = freshPrefix();
    const [one, two] = [state(prefix), state(prefix)];
    const probe = await one.takeRateTokens('probe', 1, 1);
    if (probe.windowEndsInMs < 600) await new Promise((r) => setTimeout(r, probe.windowEndsInMs + 20));
    const grants = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).takeRateTokens('app-1', 7, 1)));
    expect(grants.filter((g) => g.granted === 1)).toHaveLength(7);
  });

  it('gives a lease to one holder across clients until its time runs out, and renews it for that holder', async () => {
    const prefix = freshPrefix();
    const [one, two] = [state(prefix), state(prefix)];
    const holders = ['host-a /data/hermod-ā', 'host-b /data/hermod'];
    const answers = await Promise.all([one.holdLease('core-instance-0', holders[0]!, 400), two.holdLease('core-instance-0', holders[1]!, 400)]);
    // Exactly one took it; the other was told who holds it.
    expect(answers.filter((a) => a === undefined)).toHaveLength(1);
    const winner = answers[0] === undefined ? 0 : 1;
    expect(answers[1 - winner]).toBe(holders[winner]);
    expect(await [one, two][winner]!.holdLease('core-instance-0', holders[winner]!, 400)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 500));
    expect(await [one, two][1 - winner]!.holdLease('core-instance-0', holders[1 - winner]!, 400)).toBeUndefined();
  });

  it('admits exactly N of N + 1 concurrent quota takes made through two clients, and shares block lists between them', async () => {
    const prefix = freshPrefix();
    const [one, two] = [state(prefix), state(prefix)];
    const limit = 40;
    const grants = await Promise.all(
      Array.from({ length: limit + 1 }, (_, i) => (i % 2 ? one : two).takeQuota([{ key: 'kōrero|day|2026-11-24', limit, wanted: 1, ttlMs: 60_000 }])),
    );
    expect(grants.filter(([g]) => g === 1)).toHaveLength(limit);
    await one.markScreeningLoaded(['', 'Ngā Kōrero'], await one.beginScreeningLoad(['', 'Ngā Kōrero']));
    await one.setBlocks([{ scope: '', prefix: '+8190', blocked: true }]);
    expect(await two.findBlocks([{ applicationId: 'Ngā Kōrero', destination: '+819012345678' }])).toEqual(['+8190']);
  });

  it('refuses to screen a send once Redis has lost the opt-outs and block lists, until they are loaded again', async () => {
    const prefix = freshPrefix();
    const s = state(prefix);
    const scopes = ['', 'Ngā Kōrero'];
    const sends = [{ applicationId: 'Ngā Kōrero', destination: '+64211234567' }];
    const pairs = [{ applicationId: 'Ngā Kōrero', handset: '+64211234567' }];
    expect(await s.screeningMissing(scopes)).toEqual(scopes);
    await expect(s.areOptedOut(pairs)).rejects.toMatchObject({ code: 'unavailable', retryable: true });
    await expect(s.findBlocks(sends)).rejects.toMatchObject({ code: 'unavailable', retryable: true });
    const token = await s.beginScreeningLoad(scopes);
    await s.setOptOuts([{ applicationId: 'Ngā Kōrero', handset: '+64211234567', optedOut: true }]);
    expect(await s.markScreeningLoaded(scopes, token)).toBe(true);
    expect(await s.areOptedOut(pairs)).toEqual([true]);
    // Redis restarts empty (here: its keys are gone).
    await deleteRedisKeys(prefix);
    expect(await s.screeningMissing(scopes)).toEqual(scopes);
    await s.screeningRefused();
    await expect(s.areOptedOut(pairs)).rejects.toMatchObject({ code: 'unavailable' });
    await expect(s.findBlocks(sends)).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('tells which scopes its reads were refused for, each once, so core loads those at once', async () => {
    const prefix = freshPrefix();
    const s = state(prefix);
    const scopes = ['', 'Ngā Kōrero', 'acme 🌿'];
    await s.markScreeningLoaded(scopes, await s.beginScreeningLoad(scopes));
    expect(await s.areOptedOut([{ applicationId: 'acme 🌿', handset: '+64211234567' }])).toEqual([false]);
    expect(await s.screeningRefused()).toEqual([]);
    await deleteRedisKeys(prefix);
    await expect(s.areOptedOut([{ applicationId: 'acme 🌿', handset: '+64211234567' }])).rejects.toMatchObject({ code: 'unavailable' });
    await expect(s.findBlocks([{ applicationId: 'Ngā Kōrero', destination: '+819012345678' }])).rejects.toMatchObject({ code: 'unavailable' });
    expect((await s.screeningRefused()).sort()).toEqual(scopes.sort());
    expect(await s.screeningRefused()).toEqual([]);
  });

  it('does not mark a load done when Redis lost its data while the load ran, so the lists are loaded again', async () => {
    const prefix = freshPrefix();
    const s = state(prefix);
    const scopes = ['', 'Ngā Kōrero', 'acme 🌿'];
    const token = await s.beginScreeningLoad(scopes);
    await s.setOptOuts([{ applicationId: 'Ngā Kōrero', handset: '+64211234567', optedOut: true }]);
    // Redis restarts empty halfway through the load: what was put in before is gone, what comes after is there.
    await deleteRedisKeys(prefix);
    await s.setBlocks([{ scope: 'acme 🌿', prefix: '+6427999', blocked: true }]);
    expect(await s.markScreeningLoaded(scopes, token)).toBe(false);
    expect(await s.screeningMissing(scopes)).toEqual(scopes);
    await expect(s.areOptedOut([{ applicationId: 'Ngā Kōrero', handset: '+64211234567' }])).rejects.toMatchObject({ code: 'unavailable' });
    // A whole load, undisturbed, is marked.
    const again = await s.beginScreeningLoad(scopes);
    await s.setOptOuts([{ applicationId: 'Ngā Kōrero', handset: '+64211234567', optedOut: true }]);
    expect(await s.markScreeningLoaded(scopes, again)).toBe(true);
    expect(await s.areOptedOut([{ applicationId: 'Ngā Kōrero', handset: '+64211234567' }])).toEqual([true]);
  });

  it('marks both of two loads under way at once (two cores), so neither undoes the other', async () => {
    const prefix = freshPrefix();
    const [one, two] = [state(prefix), state(prefix)];
    const scopes = ['', 'Ngā Kōrero', 'acme 🌿'];
    const first = await one.beginScreeningLoad(scopes);
    const second = await two.beginScreeningLoad(scopes);
    expect(await one.markScreeningLoaded(scopes, first)).toBe(true);
    expect(await two.markScreeningLoaded(scopes, second)).toBe(true);
    expect(await one.screeningMissing(scopes)).toEqual([]);
  });

  it('refuses calls once closed', async () => {
    const s = createRedisState({ redis: REDIS_URL, prefix: freshPrefix() });
    await s.close();
    await expect(s.getStatus('m')).rejects.toMatchObject({ code: 'unavailable' });
    await expect(s.advanceStatuses([{ id: 'm', status: 'sent', at: 1 }])).rejects.toMatchObject({ code: 'unavailable' });
  });
});
