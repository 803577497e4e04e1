import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Bus, BusRecord } from '../ports/bus';
import { eventually } from '../../test/support/eventually';
import { freePort } from '../../test/support/free-port';
import { startRedisServer } from '../../test/support/redis-server';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from '../../test/support/redis-keys';
import { deferred, unique } from './contract-support';
import { fnv1a } from './memory-bus';
import { createRedisBus, type RedisBusOptions } from './redis-bus';
import { compareIds } from './redis-bus-replies';

const prefixes = new Set<string>();
const freshPrefix = (): string => {
  const prefix = randomPrefix('tracked');
  prefixes.add(prefix);
  return prefix;
};
afterAll(() => deleteRedisKeys(...prefixes));

const FAST = { leaseMs: 600, renewEveryMs: 100, claimIdleMs: 300, blockMs: 200, retryDelayMs: 5, closeTimeoutMs: 2000 } satisfies Partial<RedisBusOptions>;
const records = (texts: string[]): BusRecord[] => texts.map((t, i) => ({ key: `key-${i}`, value: Buffer.from(t) }));
const TEXTS = ['Kia ora 👋🏽', 'Tēnā koe', '你好，世界', 'नमस्ते', 'Ngā mihi 🌿', 'こんにちは', 'Привет', 'مرحبا'];

describe('Redis bus tracked publishing', () => {
  let buses: Bus[] = [];
  const open = (redis: string, prefix: string): Bus => {
    const b = createRedisBus({ redis, prefix, partitions: 4, ...FAST });
    buses.push(b);
    return b;
  };
  afterEach(async () => {
    await Promise.all(buses.map((b) => b.close()));
    buses = [];
  });

  it('says where each record went, in the order of the records, in one epoch', async () => {
    const bus = open(REDIS_URL, freshPrefix());
    const topic = unique('t');
    const positions = await bus.tracked!.publish(topic, records(TEXTS));
    expect(positions).toHaveLength(TEXTS.length);
    expect(new Set(positions.map((p) => p.epoch)).size).toBe(1);
    expect(positions.map((p) => p.partition)).toEqual(TEXTS.map((_, i) => fnv1a(`key-${i}`) % 4));
    const later = await bus.tracked!.publish(topic, records(TEXTS));
    later.forEach((p, i) => {
      expect(p.epoch).toBe(positions[i]!.epoch);
      expect(compareIds(p.offset, positions[i]!.offset)).toBeGreaterThan(0);
    });
    // Each position is the record's offset as a subscriber is handed it.
    const seen = new Map<string, string>();
    await bus.subscribe(
      topic,
      async (batch) => {
        for (const r of batch) seen.set(`${r.partition} ${r.offset}`, r.value.toString());
      },
      { group: unique('g') },
    );
    await eventually(() => seen.size === 2 * TEXTS.length);
    expect(positions.map((p) => seen.get(`${p.partition} ${p.offset}`))).toEqual(TEXTS);
  });

  it('says a record is acknowledged only once the group has acknowledged it', async () => {
    const bus = open(REDIS_URL, freshPrefix());
    const topic = unique('t');
    const group = unique('g');
    const positions = await bus.tracked!.publish(topic, records(TEXTS));
    // No group yet: nothing is acknowledged.
    let acks = await bus.tracked!.acknowledged(topic, group);
    expect(positions.filter((p) => acks.covers(p))).toEqual([]);

    const release = deferred();
    let handed = 0;
    await bus.subscribe(
      topic,
      async (batch) => {
        handed += batch.length;
        await release.promise;
      },
      { group },
    );
    // Read, not yet acknowledged.
    await eventually(() => handed > 0);
    acks = await bus.tracked!.acknowledged(topic, group);
    expect(positions.filter((p) => acks.covers(p))).toEqual([]);

    release.resolve();
    await eventually(async () => {
      const now = await bus.tracked!.acknowledged(topic, group);
      return positions.every((p) => now.covers(p));
    });
    // Another group has acknowledged nothing of it.
    const other = await bus.tracked!.acknowledged(topic, unique('g'));
    expect(positions.filter((p) => other.covers(p))).toEqual([]);
  });

  describe('on a Redis that comes back empty', () => {
    let server: ChildProcess | undefined;
    afterAll(() => server?.kill('SIGKILL'));

    it('never says a record of the epoch before is acknowledged, even once the group has read past its id', async () => {
      const port = await freePort();
      server = await startRedisServer(port);
      const url = `redis://127.0.0.1:${port}`;
      const prefix = freshPrefix();
      const topic = unique('t');
      const group = unique('g');
      const bus = open(url, prefix);
      const lost = await bus.tracked!.publish(topic, records(TEXTS));

      const flusher = new Redis(url);
      await flusher.flushall();
      flusher.disconnect();

      const after = await bus.tracked!.publish(topic, records(TEXTS));
      expect(after[0]!.epoch).not.toBe(lost[0]!.epoch);
      await bus.subscribe(topic, async () => undefined, { group });
      await eventually(async () => {
        const acks = await bus.tracked!.acknowledged(topic, group);
        return after.every((p) => acks.covers(p));
      });
      const acks = await bus.tracked!.acknowledged(topic, group);
      expect(acks.epoch).toBe(after[0]!.epoch);
      // The group read past every old id (the new ones are later, by the clock), yet none of them counts.
      for (const p of lost) expect(compareIds(p.offset, after[after.length - 1]!.offset)).toBeLessThan(0);
      expect(lost.filter((p) => acks.covers(p))).toEqual([]);
      expect(lost.filter((p) => acks.covers({ ...p, epoch: acks.epoch }))).toHaveLength(lost.length);
      await bus.close();
      server.kill('SIGKILL');
      await once(server, 'exit');
      server = undefined;
    });
  });
});
