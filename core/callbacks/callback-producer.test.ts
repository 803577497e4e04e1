import fs from 'node:fs';
import type { ImStatusNotice } from '../im/im-status-notice';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { createLogger } from '../../lib/log';
import { message } from '../adapters/history-contract';
import { createMemoryBus } from '../adapters/memory-bus';
import { createRecentMessages } from '../messages/recent-messages';
import type { StatusChange } from '../messages/status-recorder';
import type { MessageRecord } from '../ports/message-history';
import { openCallbackOutbox, type CallbackOutbox } from './callback-outbox';
import { createCallbackProducer } from './callback-producer';
import { eventually } from '../../test/support/eventually';

const log = createLogger({ test: 'callback-producer' });
const dirs: string[] = [];
const outboxes: CallbackOutbox[] = [];

afterEach(() => {
  for (const o of outboxes.splice(0)) o.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const freshDir = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-callback-producer-'));
  dirs.push(dir);
  return dir;
};

const open = (dir: string): CallbackOutbox => {
  const outbox = openCallbackOutbox({ dir, log });
  outboxes.push(outbox);
  return outbox;
};

/** An old message: accepted long ago, no longer among the recent ones, so its status change must look it up in history. */
const old = message({ id: 'm-old', applicationId: 'tenant-a', destination: '+64211234567', reference: 'Pānui 🌿 #7 你好', direction: 'MT', channel: 'sms' });
const receipt: StatusChange = { messageId: old.id, applicationId: old.applicationId, channel: 'sms', status: 'received', at: Date.now() };

/** A history lookup that answers from `held`, or never (`hang`). */
const lookupOf = (held: MessageRecord[], hang = false) => ({
  find: (id: string): Promise<MessageRecord | undefined> => (hang ? new Promise(() => undefined) : Promise.resolve(held.find((m) => m.id === id))),
});

const producerOn = (outbox: CallbackOutbox, lookup: ReturnType<typeof lookupOf>) =>
  createCallbackProducer({ bus: createMemoryBus(), lookup, recent: createRecentMessages(), log, outbox, busKeepsRecords: false });

const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

describe('callback producer', () => {
  it('still makes the callback of a late receipt when core dies while its message is being looked up in history', async () => {
    const dir = freshDir();
    const before = open(dir);
    producerOn(before, lookupOf([old], true)).statusChanged(receipt);
    await settle();
    expect(before.owed()).toEqual([]);
    // kill -9: the lookup never ends, nothing more is written.
    before.close();

    const after = open(dir);
    producerOn(after, lookupOf([old]));
    await settle();
    const owed = after.owed();
    expect(owed).toHaveLength(1);
    expect(owed[0]).toMatchObject({
      applicationId: 'tenant-a',
      kind: 'status',
      messageId: 'm-old',
      body: { id: 'm-old', status: 'received', detail: '+64211234567', reference: 'Pānui 🌿 #7 你好' },
    });
  });

  it('gives the job of a lookup cut short by a restart the event id it was to have, so a receiver can tell a repeat', async () => {
    const dir = freshDir();
    const first = open(dir);
    producerOn(first, lookupOf([old], true)).statusChanged(receipt);
    await settle();
    const [kept] = first.lookups();
    first.close();

    const second = open(dir);
    producerOn(second, lookupOf([old]));
    await settle();
    expect(second.owed().map((j) => j.eventId)).toEqual([kept!.eventId]);
    expect(second.lookups()).toEqual([]);
  });

  it('gives a message’s accepted callback the same event id in every process, so a receiver can tell the one told again after a crash', async () => {
    const accepted = (m: MessageRecord): StatusChange => ({
      messageId: m.id,
      applicationId: m.applicationId,
      channel: 'sms',
      status: 'accepted',
      at: Date.now(),
    });
    const other = message({ id: 'm-other', applicationId: 'tenant-a', direction: 'MT', channel: 'sms' });
    const eventIds = async (messages: MessageRecord[]): Promise<string[]> => {
      const outbox = open(freshDir());
      const producer = producerOn(outbox, lookupOf(messages));
      for (const m of messages) producer.statusChanged(accepted(m));
      await settle();
      return outbox.owed().map((j) => j.eventId);
    };
    const [first, firstOther] = await eventIds([old, other]);
    const [again] = await eventIds([old]);
    expect(again).toBe(first);
    expect(firstOther).not.toBe(first);
  });

  it('gives an IM status the same event id however often and in whichever process it is told, one for each message, attempt and status', async () => {
    // After a crash the orchestrator tells a resumed attempt where it stands again: a receiver must see the repeat as one.
    const told = async (notices: ImStatusNotice[]): Promise<string[]> => {
      const outbox = open(freshDir());
      const producer = producerOn(outbox, lookupOf([]));
      for (const n of notices) producer.imStatus(n);
      await settle();
      return outbox.owed().map((j) => j.eventId);
    };
    const notice = (status: ImStatusNotice['status'], attempt?: number): ImStatusNotice => ({
      applicationId: 'tenant-a',
      messageId: 'im-1',
      status,
      reference: 'Pānui 🌿',
      at: Date.now(),
      ...(attempt ? { attempt: { number: attempt, channel: 'sms' } } : {}),
    });
    const [received, sent, secondAttempt, message] = await told([notice('received', 1), notice('sent', 1), notice('received', 2), notice('received')]);
    const [again] = await told([notice('received', 1)]);
    expect(again).toBe(received);
    expect(new Set([received, sent, secondAttempt, message]).size).toBe(4);
  });

  it('looks nothing up again after a restart once a lookup has made its job', async () => {
    const dir = freshDir();
    const first = open(dir);
    producerOn(first, lookupOf([old])).statusChanged(receipt);
    await settle();
    expect(first.owed()).toHaveLength(1);
    expect(first.lookups()).toEqual([]);
    first.close();

    const second = open(dir);
    producerOn(second, lookupOf([old]));
    await settle();
    // The job owed before the restart, once: the lookup is not made again.
    expect(second.owed()).toHaveLength(1);
    expect(second.lookups()).toEqual([]);
  });

  it('makes the callback of a late receipt once history answers again, without waiting for a restart', async () => {
    const outbox = open(freshDir());
    let failures = 0;
    const flaky = {
      find: (id: string): Promise<MessageRecord | undefined> =>
        ++failures <= 2 ? Promise.reject(new Error('Code: 241. DB::Exception: Memory limit exceeded')) : lookupOf([old]).find(id),
    };
    createCallbackProducer({
      bus: createMemoryBus(),
      lookup: flaky,
      recent: createRecentMessages(),
      log,
      outbox,
      busKeepsRecords: false,
      lookupRetryMs: 5,
    }).statusChanged(receipt);
    await new Promise((r) => setTimeout(r, 100));
    expect(failures).toBe(3);
    expect(outbox.owed()).toHaveLength(1);
    expect(outbox.owed()[0]).toMatchObject({ messageId: 'm-old', body: { status: 'received', reference: 'Pānui 🌿 #7 你好' } });
    expect(outbox.lookups()).toEqual([]);
  });

  it('keeps a lookup waiting when the job it made could not be written, so the next start makes the callback', async () => {
    const dir = freshDir();
    const outbox = open(dir);
    const full: CallbackOutbox = Object.assign(Object.create(null), outbox, {
      owe: () => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      },
    });
    producerOn(full, lookupOf([old])).statusChanged(receipt);
    await settle();
    expect(outbox.lookups().map((l) => l.change.messageId)).toEqual(['m-old']);
    outbox.close();

    const after = open(dir);
    producerOn(after, lookupOf([old]));
    await settle();
    expect(after.owed().map((j) => j.messageId)).toEqual(['m-old']);
  });

  it('ends the lookup of a message history does not have, so it is not looked up at every start', async () => {
    const dir = freshDir();
    const first = open(dir);
    producerOn(first, lookupOf([])).statusChanged({ ...receipt, messageId: 'm-unknown' });
    await settle();
    expect(first.owed()).toEqual([]);
    expect(first.lookups()).toEqual([]);
    first.close();

    expect(open(dir).lookups()).toEqual([]);
  });

  it('keeps waiting lookups through a compaction of the outbox journal', async () => {
    const dir = freshDir();
    const outbox = openCallbackOutbox({ dir, log, compactBytes: 4096 });
    outboxes.push(outbox);
    const producer = producerOn(outbox, lookupOf([old], true));
    producer.statusChanged(receipt);
    await settle();
    // Enough settled jobs to compact the journal several times over.
    for (let i = 0; i < 200; i++) {
      outbox.owe([
        {
          eventId: `e-${i}`,
          applicationId: 'tenant-b',
          kind: 'status',
          messageId: `x-${i}`,
          body: { status: 'sent', detail: 'Kia ora 👋🏽' },
          createdAt: 0,
          attempt: 0,
          notBefore: 0,
        },
      ]);
      outbox.settle([`e-${i}`]);
    }
    expect(outbox.fileBytes).toBeLessThan(4096 * 2);
    outbox.close();

    const after = open(dir);
    expect(after.lookups().map((l) => l.change)).toEqual([receipt]);
  });
});

/**
 * A bus that keeps records, whose publishes `refusal` may turn down (it
 * returns the error to reject with, or undefined to publish), and the status
 * of every callback job it took, in order.
 */
async function refusingBus(refusal: () => HermodError | undefined) {
  const inner = createMemoryBus();
  const bus = {
    ...inner,
    publish: (topic: string, records: Parameters<typeof inner.publish>[1], options?: Parameters<typeof inner.publish>[2]) => {
      const err = refusal();
      return err ? Promise.reject(err) : inner.publish(topic, records, options);
    },
  };
  const published: string[] = [];
  await inner.subscribe(
    'hermod.callbacks.v1',
    async (records) => void published.push(...records.map((r) => JSON.parse(r.value.toString('utf8')).body.status)),
    {
      group: 'test',
    },
  );
  return { bus, published };
}

/** A producer on `bus` that knows one recent v2 message, and a way to report a status of it. */
function producerOfOne(bus: Parameters<typeof createCallbackProducer>[0]['bus'], id: string) {
  const recent = createRecentMessages();
  const m = message({ id, applicationId: 'tenant-a', destination: '+64211234568', direction: 'MT', channel: 'sms', via: 'sms_v2' });
  recent.put([m]);
  const producer = createCallbackProducer({ bus, lookup: lookupOf([]), recent, log, outbox: open(freshDir()), busKeepsRecords: true });
  return (status: StatusChange['status'], at = Date.now()) =>
    producer.statusChanged({ messageId: m.id, applicationId: m.applicationId, channel: 'sms', status, at });
}

describe('callback producer on a bus that keeps records, while the bus is away', () => {
  it('publishes the callbacks it could not once the bus is back, each message in the order its changes happened', async () => {
    let away = true;
    const { bus, published } = await refusingBus(() =>
      away ? new HermodError('unavailable', 'Kafka publishing to hermod.callbacks.v1 failed: broker unreachable', { retryable: true }) : undefined,
    );
    const changed = producerOfOne(bus, 'm-now');
    for (const [i, status] of (['queued', 'sent', 'submitted'] as const).entries()) {
      changed(status, Date.now() + i);
      await settle();
    }
    await new Promise((r) => setTimeout(r, 300));
    away = false;
    changed('received', Date.now() + 9);
    await eventually(() => published.length === 4, 10_000);
    expect(published).toEqual(['queued', 'sent', 'submitted', 'received']);
  });
});

describe('callback producer on a bus that refuses a batch for good', () => {
  it('gives up that batch, keeping its jobs for the next start, and goes on publishing the callbacks after it', async () => {
    let refuseNext = true;
    const { bus, published } = await refusingBus(() => {
      if (!refuseNext) return undefined;
      refuseNext = false;
      return new HermodError('body_too_large', 'Kafka publishing to hermod.callbacks.v1 failed: message larger than the broker accepts');
    });
    const changed = producerOfOne(bus, 'm-big');
    changed('queued');
    await settle();
    changed('sent', Date.now() + 1);
    await eventually(() => published.includes('sent'), 5000);
    expect(published).toEqual(['sent']);
  });
});
