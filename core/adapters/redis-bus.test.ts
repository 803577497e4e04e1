import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Bus, DeliveredRecord } from '../ports/bus';
import { describeBusContract } from './bus-contract';
import { describeBusTraceContract } from './bus-trace-contract';
import { eventually } from '../../test/support/eventually';
import { deferred, sleep, unique } from './contract-support';
import { fnv1a } from './memory-bus';
import { createRedisBus, type RedisBusOptions } from './redis-bus';
import { deleteRedisKeys, randomPrefix, rawRedis, REDIS_URL } from '../../test/support/redis-keys';

const prefixes = new Set<string>();
const freshPrefix = (): string => {
  const prefix = randomPrefix();
  prefixes.add(prefix);
  return prefix;
};
afterAll(() => deleteRedisKeys(...prefixes));

/** Short leases and claim times so takeovers happen within a test. */
const FAST = { leaseMs: 600, renewEveryMs: 100, claimIdleMs: 300, blockMs: 500, retryDelayMs: 5, closeTimeoutMs: 2000 } satisfies Partial<RedisBusOptions>;

describeBusContract('Redis Streams', () => createRedisBus({ redis: REDIS_URL, prefix: freshPrefix(), partitions: 8, ...FAST }), { settleMs: 400 });
describeBusTraceContract('Redis Streams', () => createRedisBus({ redis: REDIS_URL, prefix: freshPrefix(), partitions: 8, ...FAST }), { settleMs: 400 });
// The same promises while acknowledged entries are trimmed as soon as possible.
describeBusContract(
  'Redis Streams, trimming at once',
  () => createRedisBus({ redis: REDIS_URL, prefix: freshPrefix(), partitions: 8, ...FAST, trimEveryMs: 20, keepAcknowledgedMs: 0 }),
  { settleMs: 400 },
);

const text = (r: DeliveredRecord): string => r.value.toString();

describe('Redis Streams bus', () => {
  let buses: Bus[] = [];
  const bus = (prefix: string, extra: Partial<RedisBusOptions> = {}): Bus => {
    const b = createRedisBus({ redis: REDIS_URL, prefix, ...FAST, ...extra });
    buses.push(b);
    return b;
  };
  afterEach(async () => {
    await Promise.all(buses.map((b) => b.close()));
    buses = [];
  });

  it('keeps each key in order across concurrent publishers on separate connections and two members sharing the work', async () => {
    const prefix = freshPrefix();
    const topic = unique('t');
    const group = unique('g');
    const seen = new Map<string, number[]>();
    const byMember = new Map<string, Set<number>>();
    const consume = (member: string) => async (records: DeliveredRecord[]) => {
      await sleep(Math.random() * 3);
      for (const r of records) {
        const list = seen.get(r.key) ?? [];
        list.push(Number(text(r)));
        seen.set(r.key, list);
        const partitions = byMember.get(member) ?? new Set();
        partitions.add(r.partition);
        byMember.set(member, partitions);
      }
    };
    await bus(prefix).subscribe(topic, consume('a'), { group, consumer: 'a', maxBatch: 16 });
    await bus(prefix).subscribe(topic, consume('b'), { group, consumer: 'b', maxBatch: 16 });
    await sleep(400); // let the two members split the partitions

    const publishers = [bus(prefix), bus(prefix), bus(prefix)];
    const rounds = 60;
    await Promise.all(
      publishers.map(async (publisher, p) => {
        for (let n = 0; n < rounds; n++) {
          await publisher.publish(
            topic,
            Array.from({ length: 4 }, (_, k) => ({ key: `p${p}-k${k}`, value: Buffer.from(String(n)) })),
          );
          if (n % 9 === p) await sleep(2);
        }
      }),
    );

    await eventually(() => [...seen.values()].reduce((sum, l) => sum + l.length, 0) >= 3 * 4 * rounds);
    const expected = Array.from({ length: rounds }, (_, n) => n);
    for (const [key, values] of seen) expect(values, `order of ${key}`).toEqual(expected);
    // Both members worked, on different partitions.
    const [a, b] = [byMember.get('a') ?? new Set(), byMember.get('b') ?? new Set()];
    expect(a.size).toBeGreaterThan(0);
    expect(b.size).toBeGreaterThan(0);
    expect([...a].filter((p) => b.has(p))).toEqual([]);
  });

  it('loses nothing and keeps each key in order while partitions move between members as they join and leave', async () => {
    const prefix = freshPrefix();
    const topic = unique('t');
    const group = unique('g');
    const seen = new Map<string, number[]>();
    const consume = async (records: DeliveredRecord[]) => {
      await sleep(Math.random() * 2);
      for (const r of records) {
        const list = seen.get(r.key) ?? [];
        list.push(Number(text(r)));
        seen.set(r.key, list);
      }
    };
    const publisher = bus(prefix);
    const first = await bus(prefix).subscribe(topic, consume, { group, consumer: 'first', maxBatch: 8 });
    const keys = 24;
    const rounds = 50;
    let published = 0;
    const publishing = (async () => {
      for (let n = 0; n < rounds; n++) {
        await publisher.publish(
          topic,
          Array.from({ length: keys }, (_, k) => ({ key: `k${k}`, value: Buffer.from(String(n)) })),
        );
        published += keys;
        await sleep(10);
      }
    })();
    await eventually(() => published >= keys * 10);
    await bus(prefix).subscribe(topic, consume, { group, consumer: 'second', maxBatch: 8 });
    await eventually(() => published >= keys * 25);
    await bus(prefix).subscribe(topic, consume, { group, consumer: 'third', maxBatch: 8 });
    await eventually(() => published >= keys * 35);
    await first.close();
    await publishing;

    await eventually(() => [...seen.values()].reduce((sum, l) => sum + l.length, 0) >= keys * rounds, 8000);
    const expected = Array.from({ length: rounds }, (_, n) => n);
    for (const [key, values] of seen) expect(values, `order of ${key}`).toEqual(expected);
  });

  it('works over RESP2 as well as RESP3', async () => {
    const url = new URL(REDIS_URL);
    const b = bus(freshPrefix(), { redis: { host: url.hostname, port: Number(url.port || 6379), protocol: 2 } });
    const topic = unique('t');
    const got: DeliveredRecord[] = [];
    await b.subscribe(topic, async (records) => void got.push(...records), { group: 'g' });
    await b.publish(topic, [{ key: 'k', value: Buffer.from([0, 255, 1]) }]);
    await eventually(() => got.length === 1);
    expect(got[0]!.value).toEqual(Buffer.from([0, 255, 1]));
    expect(got[0]!.key).toBe('k');
  });

  it('puts a record in partition fnv1a(key) % partitions', async () => {
    const b = bus(freshPrefix(), { partitions: 16 });
    const topic = unique('t');
    const seen: DeliveredRecord[] = [];
    await b.subscribe(topic, async (records) => void seen.push(...records), { group: 'g' });
    await b.publish(
      topic,
      ['+4915112345678', 'a', 'b', 'zz'].map((key) => ({ key, value: Buffer.from(key) })),
    );
    await eventually(() => seen.length === 4);
    for (const r of seen) expect(r.partition).toBe(fnv1a(r.key) % 16);
  });

  it('hands the records of a member whose handler never resolves to another member once the lease and claim time pass', async () => {
    const prefix = freshPrefix();
    const topic = unique('t');
    const group = unique('g');
    let stuckCalls = 0;
    await bus(prefix, { partitions: 2, closeTimeoutMs: 50 }).subscribe(
      topic,
      async () => {
        stuckCalls += 1;
        await new Promise<void>(() => undefined);
      },
      { group, consumer: 'stuck' },
    );
    const publisher = bus(prefix, { partitions: 2 });
    await publisher.publish(topic, [
      { key: 'k', value: Buffer.from('1') },
      { key: 'k', value: Buffer.from('2') },
    ]);
    await eventually(() => stuckCalls === 1);

    const rescued: DeliveredRecord[] = [];
    const started = Date.now();
    await bus(prefix, { partitions: 2 }).subscribe(topic, async (records) => void rescued.push(...records), { group, consumer: 'rescuer' });
    await eventually(() => rescued.length >= 2, 8000);
    expect(rescued.map(text)).toEqual(['1', '2']);
    expect(rescued.every((r) => r.redeliveries >= 1)).toBe(true);
    // Not before the handler had held the batch for claimIdleMs and its lease had run out.
    expect(Date.now() - started).toBeGreaterThanOrEqual(FAST.claimIdleMs);
    expect(stuckCalls).toBe(1);
  });

  it('redelivers the records a dead consumer read and never acknowledged, after its lease expires', async () => {
    const prefix = freshPrefix();
    const topic = unique('t');
    const group = unique('g');
    const publisher = bus(prefix, { partitions: 1 });
    await publisher.publish(
      topic,
      ['a', 'b', 'c'].map((v) => ({ key: 'k', value: Buffer.from(v) })),
    );

    // A member that read the records and died: its lease is still there, its entries pending.
    const raw = rawRedis();
    const stream = `{${prefix}:${topic}:0}`;
    try {
      await raw.call('XGROUP', ['CREATE', stream, group, '0', 'MKSTREAM']);
      await raw.call('XREADGROUP', ['GROUP', group, 'dead', 'COUNT', '2', 'STREAMS', stream, '>']);
      await raw.set(`${stream}:owner:${group}`, 'dead#0', 'PX', 400);
    } finally {
      await raw.quit();
    }

    const got: DeliveredRecord[] = [];
    const started = Date.now();
    await bus(prefix, { partitions: 1 }).subscribe(topic, async (records) => void got.push(...records), { group, consumer: 'alive' });
    await eventually(() => got.length >= 3, 8000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    // The dead member's two come first, counted as redelivered, then the one it never read.
    expect(got.map(text)).toEqual(['a', 'b', 'c']);
    expect(got.map((r) => r.redeliveries)).toEqual([1, 1, 0]);
  });

  it('takes over entries another consumer read after the takeover (a blocking read Redis ran again after a restart), once they are idle', async () => {
    const prefix = freshPrefix();
    const topic = unique('t');
    const group = unique('g');
    const got: DeliveredRecord[] = [];
    const member = bus(prefix, { partitions: 1 });
    await member.subscribe(topic, async (records) => void got.push(...records), { group, consumer: 'owner' });
    await member.publish(topic, [{ key: 'k', value: Buffer.from('kia ora 👋🏽') }]);
    await eventually(() => got.length === 1, 5000);

    // The owner is live; a consumer that lost this partition in a Redis restart reads the next entry, and stops.
    const raw = rawRedis();
    const stream = `{${prefix}:${topic}:0}`;
    try {
      // In one transaction, so the stray read is served before the owner's blocking one wakes.
      await raw
        .multi()
        .call('XADD', stream, '*', 'k', 'k', 'v', 'tēnā koe — 你好')
        .call('XREADGROUP', 'GROUP', group, 'stray', 'COUNT', '10', 'STREAMS', stream, '>')
        .exec();
    } finally {
      await raw.quit();
    }
    await member.publish(topic, [{ key: 'k', value: Buffer.from('ka kite 🌏') }]);
    // The owner claims it once it has been idle claimIdleMs: not left pending for good.
    await eventually(() => got.length === 3, 8000);
    expect(got.map((r) => r.redeliveries)).toEqual([0, 0, 1]);
  });

  it('takes over such entries found while its handler holds batches side by side, with nothing published after them', async () => {
    const prefix = freshPrefix();
    const topic = unique('t');
    const group = unique('g');
    const got: string[] = [];
    // Looked for every second from the subscription on: found at 1 s while the slow batch (0.3 to 1.2 s) is in hand,
    // which is not held so long that the partition is left (that is a second: then a takeover would claim them too).
    const member = bus(prefix, { partitions: 1, claimIdleMs: 1000, leaseMs: 2000 });
    await member.subscribe(
      topic,
      async (records) => {
        for (const r of records) {
          if (text(r) === 'pōturi 🐢') await sleep(900);
          got.push(text(r));
        }
      },
      { group, consumer: 'owner', inFlight: 2 },
    );
    await sleep(300);
    await member.publish(topic, [{ key: 'k', value: Buffer.from('pōturi 🐢') }]);
    await sleep(100);
    const raw = rawRedis();
    const stream = `{${prefix}:${topic}:0}`;
    try {
      await raw
        .multi()
        .call('XADD', stream, '*', 'k', 'k', 'v', 'ngaro — 迷子')
        .call('XREADGROUP', 'GROUP', group, 'stray', 'COUNT', '10', 'STREAMS', stream, '>')
        .exec();
    } finally {
      await raw.quit();
    }
    // Found while the slow batch is in hand; taken over once it has been idle claimIdleMs, not left until more comes.
    await eventually(() => got.includes('ngaro — 迷子'), 8000);
    expect(got).toEqual(['pōturi 🐢', 'ngaro — 迷子']);
  });

  it('gives the unacknowledged batch of a member closed mid-batch to the other member at once, before newer records', async () => {
    const prefix = freshPrefix();
    const topic = unique('t');
    const group = unique('g');
    const gate = deferred();
    const firstGot: string[] = [];
    const first = await bus(prefix, { partitions: 1, closeTimeoutMs: 30 }).subscribe(
      topic,
      async (records) => {
        firstGot.push(...records.map(text));
        await gate.promise;
      },
      { group, consumer: 'first' },
    );
    const publisher = bus(prefix, { partitions: 1 });
    await publisher.publish(
      topic,
      ['1', '2'].map((v) => ({ key: 'k', value: Buffer.from(v) })),
    );
    await eventually(() => firstGot.length === 2);
    await publisher.publish(
      topic,
      ['3'].map((v) => ({ key: 'k', value: Buffer.from(v) })),
    );

    const second: DeliveredRecord[] = [];
    await bus(prefix, { partitions: 1 }).subscribe(topic, async (records) => void second.push(...records), { group, consumer: 'second' });
    const closedAt = Date.now();
    await first.close(); // gives up on the batch after closeTimeoutMs
    await eventually(() => second.length >= 3, 5000);
    // Handed back: no wait for claimIdleMs or the lease.
    expect(Date.now() - closedAt).toBeLessThan(FAST.claimIdleMs + FAST.leaseMs);
    expect(second.map(text)).toEqual(['1', '2', '3']);
    expect(second.map((r) => r.redeliveries)).toEqual([1, 1, 0]);
    gate.resolve();
  });

  it('hands a partition’s next batches beside one whose handler is slow, with inFlight, acknowledging each as it ends', async () => {
    const prefix = freshPrefix();
    const topic = unique('t');
    const group = unique('g');
    const gate = deferred();
    const handled: string[] = [];
    const b = bus(prefix, { partitions: 1 });
    await b.subscribe(
      topic,
      async (records) => {
        if (records.some((r) => text(r) === 'pōturi 🐢')) await gate.promise;
        handled.push(...records.map(text));
      },
      { group, consumer: 'pipelined', maxBatch: 1, inFlight: 3 },
    );
    await b.publish(topic, [{ key: 'a', value: Buffer.from('pōturi 🐢') }]);
    await sleep(50);
    await b.publish(
      topic,
      ['tere 1', 'tere 2', 'tere 3'].map((v) => ({ key: v, value: Buffer.from(v) })),
    );
    await eventually(() => handled.length === 3, 5000);
    expect(handled).toEqual(['tere 1', 'tere 2', 'tere 3']);
    // Acknowledged as each ended: only the slow one is pending.
    expect(await b.lag(topic, group)).toBe(1);
    gate.resolve();
    await eventually(async () => handled.length === 4 && (await b.lag(topic, group)) === 0, 5000);
  });

  it('gives a pipelined member’s unacknowledged batches, and only those, to the other member when it is closed mid-batch', async () => {
    const prefix = freshPrefix();
    const topic = unique('t');
    const group = unique('g');
    const gate = deferred();
    const firstGot: string[] = [];
    const first = await bus(prefix, { partitions: 1, closeTimeoutMs: 30 }).subscribe(
      topic,
      async (records) => {
        firstGot.push(...records.map(text));
        if (records.some((r) => text(r).startsWith('pōturi'))) await gate.promise;
      },
      { group, consumer: 'first', maxBatch: 1, inFlight: 2 },
    );
    const publisher = bus(prefix, { partitions: 1 });
    await publisher.publish(topic, [{ key: 'a', value: Buffer.from('pōturi 1') }]);
    await eventually(() => firstGot.length === 1);
    await publisher.publish(topic, [{ key: 'b', value: Buffer.from('tere') }]);
    await eventually(() => firstGot.length === 2);
    await publisher.publish(topic, [{ key: 'c', value: Buffer.from('pōturi 2') }]);
    await eventually(() => firstGot.length === 3);

    const second: DeliveredRecord[] = [];
    await bus(prefix, { partitions: 1 }).subscribe(topic, async (records) => void second.push(...records), { group, consumer: 'second' });
    await first.close();
    await eventually(() => second.length >= 2, 5000);
    await sleep(200);
    expect(second.map(text)).toEqual(['pōturi 1', 'pōturi 2']);
    expect(second.map((r) => r.redeliveries)).toEqual([1, 1]);
    gate.resolve();
  });

  it('gives every record to each of two groups, including records published before either group existed', async () => {
    const prefix = freshPrefix();
    const topic = unique('t');
    const publisher = bus(prefix);
    await publisher.publish(
      topic,
      Array.from({ length: 20 }, (_, i) => ({ key: `k${i % 5}`, value: Buffer.from(`early-${i}`) })),
    );
    const one: string[] = [];
    const two: string[] = [];
    await bus(prefix).subscribe(topic, async (records) => void one.push(...records.map(text)), { group: 'one' });
    await bus(prefix).subscribe(topic, async (records) => void two.push(...records.map(text)), { group: 'two' });
    await publisher.publish(
      topic,
      Array.from({ length: 30 }, (_, i) => ({ key: `k${i % 5}`, value: Buffer.from(`late-${i}`) })),
    );
    await eventually(() => one.length >= 50 && two.length >= 50);
    await sleep(50);
    expect(one).toHaveLength(50);
    expect(two).toHaveLength(50);
    expect(new Set(one)).toEqual(new Set(two));
  });

  it('trims streams to about maxLen when asked', async () => {
    const prefix = freshPrefix();
    const topic = unique('t');
    const b = bus(prefix, { partitions: 1, maxLen: 10 });
    for (let i = 0; i < 5; i++)
      await b.publish(
        topic,
        Array.from({ length: 200 }, (_, j) => ({ key: 'k', value: Buffer.from(String(i * 200 + j)) })),
      );
    const raw = rawRedis();
    try {
      // Approximate trimming drops whole radix-tree nodes (100 entries by default).
      expect(await raw.xlen(`{${prefix}:${topic}:0}`)).toBeLessThan(300);
    } finally {
      await raw.quit();
    }
  });

  it('trims stream entries once every consumer group has acknowledged them', async () => {
    const prefix = freshPrefix();
    const topic = unique('t');
    const options = { partitions: 2, trimEveryMs: 100, keepAcknowledgedMs: 0 };
    const one: string[] = [];
    const two: string[] = [];
    await bus(prefix, options).subscribe(topic, async (records) => void one.push(...records.map(text)), { group: 'one', maxBatch: 50 });
    await bus(prefix, options).subscribe(topic, async (records) => void two.push(...records.map(text)), { group: 'two', maxBatch: 50 });
    const publisher = bus(prefix, options);
    const values = Array.from({ length: 400 }, (_, i) => `Kia ora ${i} — 你好 👋🏽`);
    for (let i = 0; i < values.length; i += 100)
      await publisher.publish(
        topic,
        values.slice(i, i + 100).map((v, j) => ({ key: `k${(i + j) % 7}`, value: Buffer.from(v) })),
      );
    await eventually(() => one.length >= values.length && two.length >= values.length, 10_000);
    const raw = rawRedis();
    try {
      const total = async () => (await Promise.all([0, 1].map((p) => raw.xlen(`{${prefix}:${topic}:${p}}`)))).reduce((a, n) => a + n, 0);
      const deadline = Date.now() + 5000;
      let left = await total();
      while (left > 0 && Date.now() < deadline) {
        await sleep(50);
        left = await total();
      }
      expect(left).toBe(0);
      // What comes after the trim is still delivered, and lag still counts it.
      await publisher.publish(topic, [{ key: 'k1', value: Buffer.from('Привет') }]);
      await eventually(() => one.includes('Привет') && two.includes('Привет'));
      let lag = await publisher.lag(topic, 'one');
      for (const until = Date.now() + 5000; lag !== 0 && Date.now() < until; lag = await publisher.lag(topic, 'one')) await sleep(20);
      expect(lag).toBe(0);
    } finally {
      await raw.quit();
    }
    expect(new Set(one)).toEqual(new Set([...values, 'Привет']));
  });

  it('never trims what a group still holds unacknowledged or has not read yet', async () => {
    const prefix = freshPrefix();
    const topic = unique('t');
    const options = { partitions: 1, trimEveryMs: 50, keepAcknowledgedMs: 0 };
    // A group whose only member has gone: it has read nothing and acknowledged nothing.
    await (await bus(prefix, options).subscribe(topic, async () => undefined, { group: 'away' })).close();
    const fast: string[] = [];
    const slow: string[] = [];
    const gate = deferred();
    await bus(prefix, options).subscribe(topic, async (records) => void fast.push(...records.map(text)), { group: 'fast' });
    await bus(prefix, options).subscribe(
      topic,
      async (records) => {
        await gate.promise;
        slow.push(...records.map(text));
      },
      { group: 'slow', maxBatch: 10 },
    );
    const values = Array.from({ length: 100 }, (_, i) => String(i));
    await bus(prefix, options).publish(
      topic,
      values.map((v) => ({ key: 'k', value: Buffer.from(v) })),
    );
    await eventually(() => fast.length >= values.length);
    await sleep(500); // several trim rounds
    const raw = rawRedis();
    const key = `{${prefix}:${topic}:0}`;
    try {
      expect(await raw.xlen(key)).toBe(100);
      gate.resolve();
      await eventually(() => slow.length >= values.length);
      expect(slow).toEqual(values);
      await sleep(500);
      expect(await raw.xlen(key)).toBe(100); // 'away' has still read none of it
      const away: string[] = [];
      await bus(prefix, options).subscribe(topic, async (records) => void away.push(...records.map(text)), { group: 'away' });
      await eventually(() => away.length >= values.length);
      expect(away).toEqual(values);
      const deadline = Date.now() + 5000;
      while ((await raw.xlen(key)) > 0 && Date.now() < deadline) await sleep(50);
      expect(await raw.xlen(key)).toBe(0);
    } finally {
      await raw.quit();
    }
  });

  it('releases its leases and leaves the group on close, and leaves no timer running', async () => {
    // Every timer started while the bus lives must have fired or been cleared once it is closed.
    const pending = new Set<unknown>();
    const realSetTimeout = globalThis.setTimeout;
    const realClearTimeout = globalThis.clearTimeout;
    globalThis.setTimeout = ((fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
      const handle = realSetTimeout(
        (...a: unknown[]) => {
          pending.delete(handle);
          fn(...a);
        },
        ms,
        ...args,
      );
      pending.add(handle);
      return handle;
    }) as typeof setTimeout;
    globalThis.clearTimeout = ((handle: Parameters<typeof clearTimeout>[0]) => {
      pending.delete(handle);
      realClearTimeout(handle);
    }) as typeof clearTimeout;

    const prefix = freshPrefix();
    const topic = unique('t');
    let b: Bus;
    try {
      b = createRedisBus({ redis: REDIS_URL, prefix, ...FAST, partitions: 4, retryDelayMs: 60_000 });
      let calls = 0;
      await b.subscribe(
        topic,
        async () => {
          calls += 1;
          throw new Error('always');
        },
        { group: 'g', consumer: 'c' },
      );
      await b.publish(topic, [{ key: 'k', value: Buffer.from('x') }]);
      await eventually(() => calls >= 1);
      await sleep(20);
      expect(pending.size).toBeGreaterThan(0); // the retry backoff, the lease round
      await b.close();
      await sleep(10);
      expect(pending.size).toBe(0);
    } finally {
      globalThis.setTimeout = realSetTimeout;
      globalThis.clearTimeout = realClearTimeout;
    }

    const raw = rawRedis();
    try {
      const leases = await raw.mget(...Array.from({ length: 4 }, (_, p) => `{${prefix}:${topic}:${p}}:owner:g`));
      expect(leases).toEqual([null, null, null, null]);
      expect(await raw.zcard(`{${prefix}:${topic}}:members:g`)).toBe(0);
    } finally {
      await raw.quit();
    }
    await expect(b.publish(topic, [{ key: 'k', value: Buffer.from('x') }])).rejects.toMatchObject({ code: 'unavailable' });
    await expect(b.subscribe(topic, async () => undefined, { group: 'g' })).rejects.toMatchObject({ code: 'unavailable' });
  });
});
