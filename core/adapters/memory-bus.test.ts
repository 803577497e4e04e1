import { describe, expect, it } from 'vitest';
import type { DeliveredRecord } from '../ports/bus';
import { describeBusContract } from './bus-contract';
import { describeBusTraceContract } from './bus-trace-contract';
import { eventually } from '../../test/support/eventually';
import { sleep } from './contract-support';
import { createMemoryBus, fnv1a } from './memory-bus';

describeBusContract('in-memory', () => createMemoryBus({ partitions: 8, retryDelayMs: 5 }));
describeBusTraceContract('in-memory', () => createMemoryBus({ partitions: 8, retryDelayMs: 5 }));

const value = (s: string) => Buffer.from(s);
const texts = (records: DeliveredRecord[]) => records.map((r) => r.value.toString());

describe('in-memory bus', () => {
  it('hands a partition’s next batches beside one whose handler is slow, with inFlight, and moves its position only past batches acknowledged in a row', async () => {
    const bus = createMemoryBus({ partitions: 1 });
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const handled: string[] = [];
    await bus.subscribe(
      'jobs',
      async (records) => {
        if (records.some((r) => r.value.toString() === 'pōturi 🐢')) await slow;
        handled.push(...texts(records));
      },
      { group: 'workers', maxBatch: 1, inFlight: 3 },
    );
    await bus.publish('jobs', [{ key: 'a', value: value('pōturi 🐢') }]);
    await bus.publish('jobs', [{ key: 'b', value: value('tere 1') }]);
    await bus.publish('jobs', [{ key: 'c', value: value('tere 2') }]);
    await eventually(() => handled.length === 2);
    expect(handled).toEqual(['tere 1', 'tere 2']);
    // Nothing acknowledged in a row yet: the first batch is still out.
    expect(await bus.lag('jobs', 'workers')).toBe(3);
    release();
    await eventually(() => handled.length === 3);
    await eventually(async () => (await bus.lag('jobs', 'workers')) === 0);
    await bus.close();
  });

  it('hands out again only the batch that failed, while the ones beside it are acknowledged, counting its redeliveries', async () => {
    const bus = createMemoryBus({ partitions: 1, retryDelayMs: 5 });
    const seen: { text: string; redeliveries: number }[] = [];
    let failures = 0;
    await bus.subscribe(
      'jobs',
      async (records) => {
        for (const r of records) seen.push({ text: r.value.toString(), redeliveries: r.redeliveries });
        if (records[0]!.value.toString() === 'hē ❌' && failures++ < 2) throw new Error('carrier away');
      },
      { group: 'workers', maxBatch: 1, inFlight: 2 },
    );
    await bus.publish(
      'jobs',
      ['hē ❌', 'pai 1', 'pai 2', 'pai 3'].map((text) => ({ key: text, value: value(text) })),
    );
    await eventually(async () => (await bus.lag('jobs', 'workers')) === 0);
    expect(seen.filter((s) => s.text === 'hē ❌').map((s) => s.redeliveries)).toEqual([0, 1, 2]);
    expect(seen.filter((s) => s.text !== 'hē ❌').map((s) => s.text)).toEqual(['pai 1', 'pai 2', 'pai 3']);
    await bus.close();
  });

  it('hands no batch beside another without inFlight: one at a time, as before', async () => {
    const bus = createMemoryBus({ partitions: 1 });
    let out = 0;
    let most = 0;
    await bus.subscribe(
      'jobs',
      async () => {
        most = Math.max(most, ++out);
        await sleep(5);
        out -= 1;
      },
      { group: 'workers', maxBatch: 1 },
    );
    await bus.publish(
      'jobs',
      ['a', 'b', 'c', 'd'].map((k) => ({ key: k, value: value(k) })),
    );
    await eventually(async () => (await bus.lag('jobs', 'workers')) === 0);
    expect(most).toBe(1);
    await bus.close();
  });

  it('turns a burst of single-record publishes into a few large batches', async () => {
    const bus = createMemoryBus({ partitions: 4 });
    const sizes: number[] = [];
    await bus.subscribe('t', async (records) => void sizes.push(records.length), { group: 'g' });
    for (let i = 0; i < 1000; i++) void bus.publish('t', [{ key: 'same', value: value(String(i)) }]);
    await eventually(() => sizes.reduce((a, b) => a + b, 0) === 1000);
    expect(sizes).toEqual([256, 256, 256, 232]);
    await bus.close();
  });

  it('hashes keys to partitions with FNV-1a, the same way every time', async () => {
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
    const bus = createMemoryBus({ partitions: 16 });
    const seen: DeliveredRecord[] = [];
    await bus.subscribe('t', async (records) => void seen.push(...records), { group: 'g' });
    await bus.publish(
      't',
      ['+4915112345678', 'a', 'b'].map((key) => ({ key, value: value(key) })),
    );
    await eventually(() => seen.length === 3);
    for (const r of seen) expect(r.partition).toBe(fnv1a(r.key) % 16);
    await bus.close();
  });

  it('gives a batch whose handler never settles to another member when the holder closes', async () => {
    const bus = createMemoryBus({ closeTimeoutMs: 20 });
    const second: DeliveredRecord[] = [];
    let firstCalls = 0;
    const first = await bus.subscribe(
      't',
      () => {
        firstCalls += 1;
        return new Promise<void>(() => undefined);
      },
      { group: 'g' },
    );
    await bus.publish('t', [{ key: 'k', value: value('stuck') }]);
    await eventually(() => firstCalls === 1);
    await bus.subscribe('t', async (records) => void second.push(...records), { group: 'g' });
    await first.close();
    await eventually(() => second.length === 1);
    expect(second[0]).toMatchObject({ key: 'k', redeliveries: 1, offset: '0' });
    await bus.close();
  });

  it('waits for the batches a closing member holds and counts the ones it finishes as acknowledged', async () => {
    const bus = createMemoryBus();
    let release!: () => void;
    const got: string[] = [];
    const sub = await bus.subscribe(
      't',
      async (records) => {
        await new Promise<void>((r) => (release = r));
        got.push(...texts(records));
      },
      { group: 'g' },
    );
    await bus.publish('t', [{ key: 'k', value: value('x') }]);
    await eventually(() => release !== undefined);
    const closing = sub.close();
    release();
    await closing;
    expect(got).toEqual(['x']);

    const again: string[] = [];
    await bus.subscribe('t', async (records) => void again.push(...texts(records)), { group: 'g' });
    await sleep(20);
    expect(again).toEqual([]);
    await bus.close();
  });

  it('keeps records published before any group exists for the first group', async () => {
    const bus = createMemoryBus();
    await bus.publish('t', [{ key: 'k', value: value('early') }]);
    const got: string[] = [];
    await bus.subscribe('t', async (records) => void got.push(...texts(records)), { group: 'g' });
    await eventually(() => got.length === 1);
    await bus.close();
  });

  it('starts a group created later at the oldest record still retained', async () => {
    const bus = createMemoryBus({ partitions: 1 });
    const fast: string[] = [];
    let slowGate!: () => void;
    const slowGot: string[] = [];
    await bus.subscribe('t', async (records) => void fast.push(...texts(records)), { group: 'fast' });
    await bus.publish('t', [{ key: 'k', value: value('1') }]);
    await eventually(() => fast.length === 1);
    // Released: every group (just `fast`) acknowledged it. Now a slow group holds back record 2.
    await bus.subscribe(
      't',
      async (records) => {
        if (slowGot.length === 0) await new Promise<void>((r) => (slowGate = r));
        slowGot.push(...texts(records));
      },
      { group: 'slow' },
    );
    await bus.publish('t', [{ key: 'k', value: value('2') }]);
    await eventually(() => fast.length === 2 && slowGate !== undefined);

    const late: string[] = [];
    await bus.subscribe('t', async (records) => void late.push(...texts(records)), { group: 'late' });
    await eventually(() => late.length === 1);
    expect(late).toEqual(['2']);
    slowGate();
    await eventually(() => slowGot.length === 1);
    await bus.close();
  });

  it('backs off between redeliveries of a failing batch', async () => {
    const bus = createMemoryBus({ retryDelayMs: 10, maxRetryDelayMs: 40 });
    const times: number[] = [];
    await bus.subscribe(
      't',
      async () => {
        times.push(Date.now());
        if (times.length < 5) throw new Error('not yet');
      },
      { group: 'g' },
    );
    await bus.publish('t', [{ key: 'k', value: value('x') }]);
    await eventually(() => times.length === 5);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    // 10, 20, 40, 40 ms (timers may fire a little early or late).
    expect(gaps[0]).toBeGreaterThanOrEqual(8);
    expect(gaps[2]).toBeGreaterThanOrEqual(35);
    expect(gaps[3]).toBeLessThan(200);
    await bus.close();
  });

  it('leaves no timer running after it is closed', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout' || r === 'Immediate').length;
    const before = timers();
    const bus = createMemoryBus({ retryDelayMs: 60_000 });
    let calls = 0;
    await bus.subscribe(
      't',
      async () => {
        calls += 1;
        throw new Error('always');
      },
      { group: 'g' },
    );
    await bus.publish('t', [{ key: 'k', value: value('x') }]);
    await eventually(() => calls === 1);
    await sleep(5);
    expect(timers()).toBeGreaterThan(before);
    await bus.close();
    expect(timers()).toBe(before);
  });

  it('refuses to publish or subscribe once closed', async () => {
    const bus = createMemoryBus();
    await bus.close();
    await expect(bus.publish('t', [{ key: 'k', value: value('x') }])).rejects.toMatchObject({ code: 'unavailable' });
    await expect(bus.subscribe('t', async () => undefined, { group: 'g' })).rejects.toMatchObject({ code: 'unavailable' });
  });
});

describe('in-memory bus, publishing until durable', () => {
  it('resolves a durable publish only once every subscribed group has acknowledged the records', async () => {
    const bus = createMemoryBus({ partitions: 4, retryDelayMs: 5 });
    let releaseFirst!: () => void;
    const held = new Promise<void>((r) => (releaseFirst = r));
    await bus.subscribe('t', async () => held, { group: 'slow' });
    await bus.subscribe('t', async () => undefined, { group: 'quick' });
    let done = false;
    const publishing = bus.publish('t', [{ key: 'Kia ora, e hoa mā', value: Buffer.from('tēnā koe') }], { untilDurable: true }).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBe(false);
    releaseFirst();
    await publishing;
    expect(done).toBe(true);
    await bus.close();
  });

  it('waits through a failed batch until its redelivery is acknowledged', async () => {
    const bus = createMemoryBus({ partitions: 1, retryDelayMs: 5 });
    let calls = 0;
    await bus.subscribe(
      't',
      async () => {
        if (++calls < 3) throw new Error('not yet');
      },
      { group: 'g' },
    );
    await bus.publish('t', [{ key: 'k', value: Buffer.from('👋🏽') }], { untilDurable: true });
    expect(calls).toBe(3);
    await bus.close();
  });

  it('rejects a durable publish still waiting when the bus closes, and does not wait when nobody subscribed', async () => {
    const bus = createMemoryBus({ partitions: 1, retryDelayMs: 5, closeTimeoutMs: 50 });
    await bus.publish('nobody', [{ key: 'k', value: Buffer.from('x') }], { untilDurable: true });
    await bus.subscribe('t', () => new Promise<void>(() => undefined), { group: 'stuck' });
    const waiting = bus.publish('t', [{ key: 'k', value: Buffer.from('x') }], { untilDurable: true });
    await new Promise((r) => setTimeout(r, 20));
    await bus.close();
    await expect(waiting).rejects.toThrow(/closed/);
  });
});
