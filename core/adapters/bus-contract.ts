import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Bus, type DeliveredRecord, type Subscription, valueBytes } from '../ports/bus';
import { eventually } from '../../test/support/eventually';
import { deferred, sleep, unique } from './contract-support';

export type BusFactory = () => Bus | Promise<Bus>;

export interface BusContractOptions {
  /** Longest wait for a delivery (default 10 s); brokers with slow rebalances may need more. */
  timeoutMs?: number;
  /** Pause after members join, for brokers whose group rebalance is not immediate (default 0). */
  settleMs?: number;
}

const text = (r: DeliveredRecord): string => valueBytes(r.value).toString('utf8');

/**
 * The behaviour every Bus adapter must show. Call it from a `*.test.ts` with a
 * factory that returns a fresh bus; each test uses its own topic and group
 * names, so a factory may hand out connections to one shared broker.
 */
export function describeBusContract(name: string, factory: BusFactory, options: BusContractOptions = {}): void {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const settle = (): Promise<void> => sleep(options.settleMs ?? 0);

  describe(`Bus contract: ${name}`, () => {
    let bus: Bus;
    let subscriptions: Subscription[];
    let topic: string;

    const subscribe = async (handler: (records: DeliveredRecord[]) => Promise<void>, group: string, extra: { consumer?: string; maxBatch?: number } = {}) => {
      const sub = await bus.subscribe(topic, handler, { group, ...extra });
      subscriptions.push(sub);
      return sub;
    };
    const publishValues = (key: string, values: string[]) =>
      bus.publish(
        topic,
        values.map((v) => ({ key, value: Buffer.from(v) })),
      );

    beforeEach(async () => {
      bus = await factory();
      subscriptions = [];
      topic = unique('contract-topic');
    });

    afterEach(async () => {
      for (const sub of subscriptions) await sub.close();
      await bus.close();
    });

    it('delivers the records of each key in publication order while several publishers run concurrently', async () => {
      const seen = new Map<string, number[]>();
      const busyPartitions = new Set<number>();
      let overlapping = false;
      let mixedBatch = false;
      await subscribe(async (records) => {
        if (new Set(records.map((r) => r.partition)).size !== 1) mixedBatch = true;
        const partition = records[0]!.partition;
        if (busyPartitions.has(partition)) overlapping = true;
        busyPartitions.add(partition);
        await sleep(Math.random() * 2);
        for (const r of records) {
          const list = seen.get(r.key) ?? [];
          list.push(Number(text(r)));
          seen.set(r.key, list);
        }
        busyPartitions.delete(partition);
      }, unique('group'));
      await settle();

      const publishers = 4;
      const keysPerPublisher = 5;
      const rounds = 40;
      await Promise.all(
        Array.from({ length: publishers }, async (_, p) => {
          for (let n = 0; n < rounds; n++) {
            // Each publisher owns its keys; records go out in small batches with pauses between.
            await bus.publish(
              topic,
              Array.from({ length: keysPerPublisher }, (_, k) => ({ key: `p${p}-k${k}`, value: Buffer.from(String(n)) })),
            );
            if (n % 7 === p) await sleep(1);
          }
        }),
      );

      const expected = Array.from({ length: rounds }, (_, n) => n);
      await eventually(() => [...seen.values()].reduce((sum, l) => sum + l.length, 0) >= publishers * keysPerPublisher * rounds, timeoutMs);
      expect(seen.size).toBe(publishers * keysPerPublisher);
      for (const [key, values] of seen) expect(values, `order of key ${key}`).toEqual(expected);
      expect(overlapping, 'two batches of one partition in handlers at once').toBe(false);
      expect(mixedBatch, 'a batch mixing partitions').toBe(false);
    });

    it('hands a batch out again, counting redeliveries, when the handler rejects it', async () => {
      const acknowledged: DeliveredRecord[] = [];
      let failuresLeft = 2;
      await subscribe(async (records) => {
        if (failuresLeft > 0) {
          failuresLeft -= 1;
          throw new Error('handler failed');
        }
        acknowledged.push(...records);
      }, unique('group'));
      await settle();
      await publishValues('one-key', ['a', 'b', 'c', 'd']);

      await eventually(() => acknowledged.length >= 4, timeoutMs);
      expect(acknowledged.map(text)).toEqual(['a', 'b', 'c', 'd']);
      expect(acknowledged[0]!.redeliveries).toBe(2);
      expect(acknowledged[0]!.topic).toBe(topic);
    });

    it('gives the unacknowledged batch of a member that closes to another member of the group', async () => {
      const group = unique('group');
      const gate = deferred();
      const firstMemberGot: DeliveredRecord[] = [];
      const first = await subscribe(
        async (records) => {
          firstMemberGot.push(...records);
          await gate.promise;
        },
        group,
        { consumer: 'first' },
      );
      await settle();
      await publishValues('k', ['1', '2', '3']);
      await eventually(() => firstMemberGot.length > 0, timeoutMs);

      const secondMemberGot: DeliveredRecord[] = [];
      await subscribe(
        async (records) => {
          secondMemberGot.push(...records);
        },
        group,
        { consumer: 'second' },
      );
      await settle();

      // The first member stops and gives up on the batch it holds, as a worker does when it shuts down.
      const closing = first.close();
      gate.reject(new Error('shutting down'));
      await closing;

      await eventually(() => secondMemberGot.length >= 3, timeoutMs);
      expect(secondMemberGot.map(text)).toEqual(['1', '2', '3']);
      expect(secondMemberGot[0]!.redeliveries).toBeGreaterThanOrEqual(1);
    });

    it('lets a member that joins an existing group late receive everything the group has not acknowledged', async () => {
      const group = unique('group');
      const early: string[] = [];
      const first = await subscribe(async (records) => {
        early.push(...records.map(text));
      }, group);
      await settle();
      await publishValues('k', ['before']);
      await eventually(() => early.length === 1, timeoutMs);
      await first.close();

      await publishValues('k', ['x', 'y']);
      await publishValues('other', ['z']);
      const late: string[] = [];
      await subscribe(async (records) => {
        late.push(...records.map(text));
      }, group);

      await eventually(() => late.length >= 3, timeoutMs);
      expect(late.sort()).toEqual(['x', 'y', 'z']);
      expect(early).toEqual(['before']);
    });

    it('shares the work of a topic between two members of a group, handing each record to only one of them', async () => {
      const group = unique('group');
      const byMember = { a: [] as string[], b: [] as string[] };
      await subscribe(
        async (records) => {
          byMember.a.push(...records.map(text));
        },
        group,
        { consumer: 'a' },
      );
      await subscribe(
        async (records) => {
          byMember.b.push(...records.map(text));
        },
        group,
        { consumer: 'b' },
      );
      await settle();

      // In waves of 200 until both members have had some: on a loaded machine the second member may take its share of
      // the partitions after the settling time, and the first wave then all goes to the first (a Node 24 CI run).
      const values: string[] = [];
      const deadline = Date.now() + timeoutMs;
      do {
        const wave = Array.from({ length: 200 }, (_, i) => String(values.length + i));
        values.push(...wave);
        await bus.publish(
          topic,
          wave.map((v) => ({ key: `destination-${v}`, value: Buffer.from(v) })),
        );
        await eventually(() => byMember.a.length + byMember.b.length >= values.length, timeoutMs);
      } while ((byMember.a.length === 0 || byMember.b.length === 0) && Date.now() < deadline);
      await sleep(20);
      expect(byMember.a.length).toBeGreaterThan(0);
      expect(byMember.b.length).toBeGreaterThan(0);
      const all = [...byMember.a, ...byMember.b];
      expect(all).toHaveLength(values.length);
      expect(new Set(all).size).toBe(values.length);
    });

    it('reports as lag what a group has not acknowledged, and none once it has', async () => {
      const gate = deferred();
      let handled = 0;
      const group = unique('group');
      await subscribe(async (records) => {
        await gate.promise;
        handled += records.length;
      }, group);
      await settle();
      await publishValues('lag-key', ['1', '2', '3', '4', '5']);
      const deadline = Date.now() + timeoutMs;
      let lag = 0;
      while (Date.now() < deadline && (lag = await bus.lag(topic, group)) !== 5) await sleep(20);
      expect(lag).toBe(5);
      gate.resolve();
      await eventually(() => handled === 5, timeoutMs);
      while (Date.now() < deadline && (lag = await bus.lag(topic, group)) !== 0) await sleep(20);
      expect(lag).toBe(0);
    });

    it('reports as the lag of a group that never joined every record the topic holds, what it would read on joining', async () => {
      // A channel whose workers were never started: its backlog read 0 whatever waited on its topic.
      expect(await bus.lag(topic, unique('never-joined'))).toBe(0);
      await publishValues('kupu', ['Kia ora', 'Tēnā koe', '你好 👋🏽']);
      const deadline = Date.now() + timeoutMs;
      let lag = 0;
      while (Date.now() < deadline && (lag = await bus.lag(topic, unique('never-joined'))) !== 3) await sleep(20);
      expect(lag).toBe(3);
      expect(await bus.lag(unique('no-such-topic'), unique('never-joined'))).toBe(0);
    });

    it('gives every record to each consumer group', async () => {
      const one: string[] = [];
      const two: string[] = [];
      await subscribe(async (records) => {
        one.push(...records.map(text));
      }, unique('group-one'));
      await subscribe(async (records) => {
        two.push(...records.map(text));
      }, unique('group-two'));
      await settle();

      const values = Array.from({ length: 50 }, (_, i) => String(i));
      await bus.publish(
        topic,
        values.map((v) => ({ key: `k${Number(v) % 7}`, value: Buffer.from(v) })),
      );

      await eventually(() => one.length >= values.length && two.length >= values.length, timeoutMs);
      expect(one.sort()).toEqual([...values].sort());
      expect(two.sort()).toEqual([...values].sort());
    });

    it('never hands a handler more records than the subscription’s maxBatch', async () => {
      const sizes: number[] = [];
      await subscribe(
        async (records) => {
          sizes.push(records.length);
        },
        unique('group'),
        { maxBatch: 10 },
      );
      await settle();
      await publishValues(
        'k',
        Array.from({ length: 95 }, (_, i) => String(i)),
      );

      await eventually(() => sizes.reduce((a, b) => a + b, 0) >= 95, timeoutMs);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(10);
    });

    it('stops delivering to a subscription once it is closed', async () => {
      const got: string[] = [];
      const sub = await subscribe(async (records) => {
        got.push(...records.map(text));
      }, unique('group'));
      await settle();
      await publishValues('k', ['first']);
      await eventually(() => got.length === 1, timeoutMs);
      await sub.close();

      await publishValues('k', ['second']);
      await sleep(50);
      expect(got).toEqual(['first']);
    });
  });
}
