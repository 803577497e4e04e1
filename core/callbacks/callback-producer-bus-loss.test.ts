import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createLogger, setLogLevel } from '../../lib/log';
import { eventually } from '../../test/support/eventually';
import { freePort } from '../../test/support/free-port';
import { startRedisServer } from '../../test/support/redis-server';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from '../../test/support/redis-keys';
import { message } from '../adapters/history-contract';
import { createRedisBus } from '../adapters/redis-bus';
import { createRecentMessages } from '../messages/recent-messages';
import type { StatusChange } from '../messages/status-recorder';
import type { Bus } from '../ports/bus';
import { decodeCallback } from './callback-job';
import { openCallbackOutbox } from './callback-outbox';
import { createCallbackProducer } from './callback-producer';

setLogLevel('error');
const log = createLogger({ test: 'callback-producer-bus-loss' });
const prefixes: string[] = [];
afterAll(() => deleteRedisKeys(...prefixes));

/** A Redis bus, an outbox in a data directory and a producer on them that knows one message, whose statuses it is told. */
describe('callback producer on a Redis bus that can lose what it took', () => {
  const closing: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of closing.splice(0).reverse()) await c();
  });
  const dir = (): string => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-producer-loss-'));
    closing.push(() => fs.rmSync(d, { recursive: true, force: true }));
    return d;
  };
  const busOn = (redis: string, prefix: string): Bus => {
    const bus = createRedisBus({ redis, prefix, partitions: 2, blockMs: 200, leaseMs: 600, renewEveryMs: 100, claimIdleMs: 300 });
    closing.push(() => bus.close());
    return bus;
  };
  const m = message({ id: 'm-kia-ora', applicationId: 'tenant-a', destination: '+64211234569', direction: 'MT', channel: 'sms', via: 'sms_v2' });
  const producerOn = (bus: Bus, outboxDir: string) => {
    const outbox = openCallbackOutbox({ dir: outboxDir, log });
    const recent = createRecentMessages();
    recent.put([m]);
    const producer = createCallbackProducer({
      bus,
      lookup: { find: async () => undefined },
      recent,
      log,
      outbox,
      busKeepsRecords: true,
      acknowledgedEveryMs: 50,
    });
    const stop = async (): Promise<void> => {
      await producer.drain();
      outbox.close();
    };
    closing.push(stop);
    const changed = (status: StatusChange['status'], at: number) =>
      producer.statusChanged({ messageId: m.id, applicationId: m.applicationId, channel: 'sms', status, at });
    return { producer, outbox, changed, stop };
  };
  /** The callback senders' group, taking every record; the event ids it took, in order. */
  const sender = async (bus: Bus): Promise<string[]> => {
    const taken: string[] = [];
    const sub = await bus.subscribe(
      'hermod.callbacks.v1',
      async (records) => void taken.push(...records.map((r) => decodeCallback(r.value as Buffer).eventId)),
      {
        group: 'callback-senders',
      },
    );
    closing.push(() => sub.close());
    return taken;
  };

  it('keeps each published callback until the callback senders have acknowledged it, then drops it', async () => {
    const prefix = randomPrefix('producer-loss');
    prefixes.push(prefix);
    const bus = busOn(REDIS_URL, prefix);
    const { outbox, changed } = producerOn(bus, dir());
    for (const [i, status] of (['queued', 'sent', 'submitted'] as const).entries()) changed(status, Date.now() + i);
    await eventually(() => outbox.unacknowledged().length === 3);
    // The outbox of the core that takes them owes them: not this one.
    expect(outbox.size).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    expect(outbox.unacknowledged()).toHaveLength(3);

    const taken = await sender(bus);
    await eventually(() => outbox.unacknowledged().length === 0);
    expect(taken).toHaveLength(3);
  });

  it('publishes again, when the bus says it lost them, every callback not yet acknowledged, with the same event ids', async () => {
    const prefix = randomPrefix('producer-loss');
    prefixes.push(prefix);
    const bus = busOn(REDIS_URL, prefix);
    const { producer, outbox, changed } = producerOn(bus, dir());
    changed('queued', Date.now());
    changed('sent', Date.now() + 1);
    await eventually(() => outbox.unacknowledged().length === 2);
    const ids = outbox.unacknowledged().map((k) => k.job.eventId);
    const before = outbox.unacknowledged().map((k) => k.position.offset);
    expect(producer.busLost()).toBe(2);
    await eventually(() => outbox.unacknowledged().length === 2 && outbox.unacknowledged().every((k, i) => k.position.offset !== before[i]));
    expect(outbox.unacknowledged().map((k) => k.job.eventId)).toEqual(ids);
    // Twice each on the stream; the dispatcher's outbox drops the repeat of an event it owes or settled.
    const taken = await sender(bus);
    await eventually(() => outbox.unacknowledged().length === 0);
    expect([...taken].sort()).toEqual([...ids, ...ids].sort());
  });

  describe('on a Redis of its own', () => {
    let server: ChildProcess | undefined;
    afterAll(() => server?.kill('SIGKILL'));

    it('publishes again at its next start the callbacks a Redis that came back empty while it was stopped had lost', async () => {
      const port = await freePort();
      server = await startRedisServer(port);
      const url = `redis://127.0.0.1:${port}`;
      const outboxDir = dir();
      const first = producerOn(busOn(url, 'tēnā'), outboxDir);
      first.changed('queued', Date.now());
      first.changed('submitted', Date.now() + 1);
      await eventually(() => first.outbox.unacknowledged().length === 2);
      const ids = first.outbox.unacknowledged().map((k) => k.job.eventId);
      await first.stop();

      const redis = new Redis(url);
      await redis.flushall();
      redis.disconnect();

      const bus = busOn(url, 'tēnā');
      const again = producerOn(bus, outboxDir);
      expect(again.outbox.unacknowledged().map((k) => k.job.eventId)).toEqual(ids);
      const taken = await sender(bus);
      await eventually(() => taken.length === 2);
      expect(taken).toEqual(ids);
      await eventually(() => again.outbox.unacknowledged().length === 0);
    });

    it('publishes again the callbacks a Redis that came back empty had lost, without being told', async () => {
      const port = await freePort();
      server?.kill('SIGKILL');
      server = await startRedisServer(port);
      const url = `redis://127.0.0.1:${port}`;
      const bus = busOn(url, 'ngā-mihi');
      const { outbox, changed } = producerOn(bus, dir());
      changed('queued', Date.now());
      await eventually(() => outbox.unacknowledged().length === 1);
      const [id] = outbox.unacknowledged().map((k) => k.job.eventId);

      const redis = new Redis(url);
      await redis.flushall();
      redis.disconnect();

      const taken = await sender(bus);
      await eventually(() => taken.length === 1);
      expect(taken).toEqual([id]);
      await eventually(() => outbox.unacknowledged().length === 0);
    });
  });
});
