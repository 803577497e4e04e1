import { describe, expect, it } from 'vitest';
import { eventually } from '../../test/support/eventually';
import type { CallbackJob } from './callback-job';
import { createCallbackQueues, type TryOutcome } from './callback-queues';

const job = (eventId: string, messageId: string, notBefore = 0, applicationId = 'acme'): CallbackJob => ({
  eventId,
  applicationId,
  kind: 'status',
  messageId,
  body: { id: messageId, status: eventId },
  createdAt: Date.now(),
  attempt: notBefore === 0 ? 0 : 1,
  notBefore,
});

/** A reply (MO) from `handset`: its own message id, as every reply has. */
const reply = (n: number, handset: string, applicationId = 'acme'): CallbackJob => ({
  eventId: `${handset} ${n}`,
  applicationId,
  kind: 'reply',
  messageId: `mo-${handset}-${n}`,
  body: { id: `mo-${handset}-${n}`, source: handset, destination: 'ACME', content: `kupu ${n} — 第${n}` },
  createdAt: Date.now(),
  attempt: 0,
  notBefore: 0,
});

describe('callbacks queued for their tries', () => {
  it('delivers a handset’s replies to an application in the order they came after its receiver was down, another handset’s beside them', async () => {
    let up = false;
    const delivered: string[] = [];
    const queues = createCallbackQueues({
      tryJob: async (j): Promise<TryOutcome> => {
        if (!up) return { done: false, retryAt: Date.now() + 5 + Math.floor(Math.random() * 60) };
        delivered.push(j.eventId);
        return { done: true, delivered: true };
      },
      onDone: () => undefined,
      onRescheduled: () => undefined,
    });
    // The same handset written two ways: one conversation.
    for (let n = 1; n <= 8; n++) queues.add(reply(n, n % 2 === 0 ? '+6421008004' : '6421008004'));
    queues.add(reply(1, '+6421008005'));
    await new Promise((r) => setTimeout(r, 150));
    up = true;
    await eventually(() => queues.size === 0, 5000);
    // Each reply had its own queue: the retries' back-off shuffled them (3, 4, 5, 6, 7, 1, 8, 2 in a trial).
    expect(delivered.filter((e) => e !== '+6421008005 1')).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => `${n % 2 === 0 ? '+6421008004' : '6421008004'} ${n}`));
    expect(delivered).toContain('+6421008005 1');
    await queues.stop();
  });

  it('tries a message’s later callbacks only after its waiting one went through, in the order they came', async () => {
    const tried: string[] = [];
    const done: string[] = [];
    let failFirst = 2;
    const queues = createCallbackQueues({
      tryJob: async (j): Promise<TryOutcome> => {
        tried.push(j.eventId);
        if (j.eventId === 'accepted' && failFirst-- > 0) return { done: false, retryAt: Date.now() + 30 };
        return { done: true };
      },
      onDone: (j) => done.push(j.eventId),
      onRescheduled: () => undefined,
    });
    queues.add(job('accepted', 'm1', Date.now() + 20));
    queues.add(job('queued', 'm1'));
    queues.add(job('sent', 'm1'));
    expect(queues.has('m1')).toBe(true);
    await eventually(() => done.length === 3);
    expect(tried).toEqual(['accepted', 'accepted', 'accepted', 'queued', 'sent']);
    expect(done).toEqual(['accepted', 'queued', 'sent']);
    expect(queues.has('m1')).toBe(false);
    expect(queues.size).toBe(0);
    await queues.stop();
  });

  it('tries each message at its own time, earliest first, and records each new attempt before waiting for it', async () => {
    const tried: string[] = [];
    const rescheduled: CallbackJob[] = [];
    const start = Date.now();
    const queues = createCallbackQueues({
      tryJob: async (j): Promise<TryOutcome> => {
        tried.push(j.eventId);
        return j.attempt < 2 ? { done: false, retryAt: Date.now() + 10 } : { done: true };
      },
      onDone: () => undefined,
      onRescheduled: (j) => rescheduled.push(j),
    });
    queues.add(job('late', 'm2', start + 150));
    queues.add(job('early', 'm3', start + 20));
    await eventually(() => tried.filter((t) => t === 'late').length === 1);
    expect(tried[0]).toBe('early');
    await eventually(() => queues.size === 0);
    expect(rescheduled.filter((j) => j.eventId === 'late').map((j) => j.attempt)).toEqual([2]);
    expect(rescheduled.every((j) => j.notBefore > 0)).toBe(true);
    await queues.stop();
  });

  it('tries an application’s waiting callbacks again at once when its receiver takes one after an outage, not at their back-off', async () => {
    let up = false;
    const tried: string[] = [];
    const queues = createCallbackQueues({
      tryJob: async (j): Promise<TryOutcome> => {
        tried.push(j.eventId);
        if (j.applicationId === 'acme' && up) return { done: true, delivered: true };
        // Down: the next try an hour on, as a long outage's back-off has it.
        return { done: false, retryAt: Date.now() + 3_600_000 };
      },
      onDone: () => undefined,
      onRescheduled: () => undefined,
    });
    queues.add(job('kua-tae-1', 'm1'));
    queues.add(job('kua-tae-2', 'm2'));
    queues.add(job('other-app', 'm3', 0, 'tāne'));
    await eventually(() => tried.length === 3);

    // The receiver is back: the first new callback goes through, and the two waiting follow it without waiting their hour.
    up = true;
    queues.add(job('new-one', 'm4'));
    await eventually(() => queues.size === 1, 2000);
    expect(tried.slice(3).sort()).toEqual(['kua-tae-1', 'kua-tae-2', 'new-one']);
    // Another application's receiver, still down, keeps its own back-off.
    expect(tried.filter((t) => t === 'other-app')).toHaveLength(1);
    await queues.stop();
  });

  it('catches up with a receiver that fails every other call at most once in its interval, and backs off between', async () => {
    let calls = 0;
    const tried: string[] = [];
    const queues = createCallbackQueues({
      tryJob: async (j): Promise<TryOutcome> => {
        tried.push(j.eventId);
        // Every other call fails (a flapping receiver): the waiting one fails each time it is tried.
        if (j.eventId === 'waiting' || calls++ % 2 === 1) return { done: false, retryAt: Date.now() + 3_600_000 };
        return { done: true, delivered: true };
      },
      onDone: () => undefined,
      onRescheduled: () => undefined,
      catchUpEveryMs: 60_000,
    });
    queues.add(job('waiting', 'm0'));
    await eventually(() => tried.length === 1);
    for (let i = 1; i <= 20; i++) queues.add(job(`e${i}`, `m${i}`));
    await eventually(() => tried.filter((t) => t !== 'waiting').length >= 20);
    await new Promise((r) => setTimeout(r, 100));
    // Tried when it first failed, and once more on the first success: not on every success.
    expect(tried.filter((t) => t === 'waiting')).toHaveLength(2);
    await queues.stop();
  });

  it('tries no more messages of one application at once than allowed, and stops waiting on stop', async () => {
    let inFlight = 0;
    let most = 0;
    const queues = createCallbackQueues({
      tryJob: async (): Promise<TryOutcome> => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return { done: true };
      },
      onDone: () => undefined,
      onRescheduled: () => undefined,
      maxPerApplication: 4,
    });
    for (let i = 0; i < 40; i++) queues.add(job(`e${i}`, `m${i}`));
    await eventually(() => queues.size === 0);
    expect(most).toBe(4);
    queues.add(job('far', 'later', Date.now() + 3_600_000));
    await queues.stop();
    expect(queues.size).toBe(1);
  });

  it('tries another application’s callbacks while every try of one application is still waiting for its receiver', async () => {
    const stuck: (() => void)[] = [];
    const done: string[] = [];
    const queues = createCallbackQueues({
      tryJob: (j): Promise<TryOutcome> =>
        j.applicationId === 'tōmuri' ? new Promise((resolve) => stuck.push(() => resolve({ done: true }))) : Promise.resolve({ done: true }),
      onDone: (j) => done.push(j.eventId),
      onRescheduled: () => undefined,
      maxPerApplication: 2,
    });
    for (let i = 0; i < 10; i++) queues.add(job(`slow-${i}`, `s${i}`, 0, 'tōmuri'));
    for (let i = 0; i < 10; i++) queues.add(job(`fast-${i}`, `f${i}`, 0, '快'));
    await eventually(() => done.length === 10);
    expect(done).toEqual(Array.from({ length: 10 }, (_, i) => `fast-${i}`));
    expect(stuck.length).toBe(2);
    await eventually(() => {
      while (stuck.length > 0) stuck.shift()!();
      return queues.size === 0;
    });
    expect(done.filter((d) => d.startsWith('slow-'))).toEqual(Array.from({ length: 10 }, (_, i) => `slow-${i}`));
    await queues.stop();
  });

  it("tries an application's replies and IM statuses while every try of its SMS statuses waits for a slow receiver (callbacks trial: a reply came 39 s late)", async () => {
    const stuck: (() => void)[] = [];
    const done: string[] = [];
    const queues = createCallbackQueues({
      tryJob: (j): Promise<TryOutcome> =>
        j.kind === 'status' ? new Promise((resolve) => stuck.push(() => resolve({ done: true }))) : Promise.resolve({ done: true }),
      onDone: (j) => done.push(j.eventId),
      onRescheduled: () => undefined,
      maxPerApplication: 2,
    });
    for (let i = 0; i < 10; i++) queues.add(job(`status-${i}`, `s${i}`));
    queues.add(reply(1, '+6421008006'));
    queues.add({ ...job('im-accepted', 'im1'), kind: 'im_status' });
    await eventually(() => done.length === 2);
    expect(done.sort()).toEqual(['+6421008006 1', 'im-accepted']);
    expect(stuck.length).toBe(2);
    await eventually(() => {
      while (stuck.length > 0) stuck.shift()!();
      return queues.size === 0;
    });
    await queues.stop();
  });

  it('takes back a message’s waiting callbacks but never the one being tried, and forgets a message taken back whole', async () => {
    const stuck: (() => void)[] = [];
    const done: string[] = [];
    const queues = createCallbackQueues({
      tryJob: (): Promise<TryOutcome> => new Promise((resolve) => stuck.push(() => resolve({ done: true }))),
      onDone: (j) => done.push(j.eventId),
      onRescheduled: () => undefined,
    });
    const first = job('accepted', 'kōrero');
    const second = job('queued', 'kōrero');
    const later = job('sent', '测试', Date.now() + 60_000);
    queues.add(first);
    queues.add(second);
    queues.add(later);
    await eventually(() => stuck.length === 1);
    expect(queues.canRemove(first)).toBe(false);
    expect(queues.canRemove(second)).toBe(true);
    queues.remove(second);
    queues.remove(later);
    expect(queues.size).toBe(1);
    expect(queues.has('测试')).toBe(false);
    stuck.shift()!();
    await eventually(() => done.length === 1);
    expect(done).toEqual(['accepted']);
    expect(queues.has('kōrero')).toBe(false);
    await queues.stop();
  });
  it('lets a message’s callbacks waiting behind one given up go but its latest, which gets its own tries (callbacks trial: a day-long outage left the final status one try)', async () => {
    const tried: string[] = [];
    const done: string[] = [];
    const queues = createCallbackQueues({
      tryJob: async (j): Promise<TryOutcome> => {
        tried.push(j.eventId);
        return j.eventId === 'accepted' ? { done: true, gaveUp: true } : { done: true, delivered: true };
      },
      onDone: (j) => void done.push(j.eventId),
      onRescheduled: () => undefined,
    });
    for (const status of ['accepted', 'queued', 'sent', 'submitted', 'received']) queues.add(job(status, 'm-1'));
    await eventually(() => queues.size === 0);
    expect(tried).toEqual(['accepted', 'received']);
    expect(done.sort()).toEqual(['accepted', 'queued', 'received', 'sent', 'submitted']);
    await queues.stop();
  });

  it('keeps a handset’s replies behind one given up: each is a message of its own, none is superseded', async () => {
    const tried: string[] = [];
    const queues = createCallbackQueues({
      tryJob: async (j): Promise<TryOutcome> => {
        tried.push(j.eventId);
        return tried.length === 1 ? { done: true, gaveUp: true } : { done: true, delivered: true };
      },
      onDone: () => undefined,
      onRescheduled: () => undefined,
    });
    for (let n = 1; n <= 3; n++) queues.add(reply(n, '+6421008004'));
    await eventually(() => queues.size === 0);
    expect(tried).toEqual(['+6421008004 1', '+6421008004 2', '+6421008004 3']);
    await queues.stop();
  });

  it('does not try early a callback whose receiver asked to wait (Retry-After) when another of its callbacks goes through (review)', async () => {
    const tried: string[] = [];
    const queues = createCallbackQueues({
      tryJob: async (j): Promise<TryOutcome> => {
        tried.push(j.eventId);
        if (j.eventId === 'asked-to-wait') return { done: false, retryAt: Date.now() + 3_600_000, askedUntil: Date.now() + 3_600_000 };
        return { done: true, delivered: true };
      },
      onDone: () => undefined,
      onRescheduled: () => undefined,
      catchUpEveryMs: 0,
    });
    queues.add(job('asked-to-wait', 'm0'));
    await eventually(() => tried.length === 1);
    for (let i = 1; i <= 5; i++) queues.add(job(`e${i}`, `m${i}`));
    await eventually(() => tried.length === 6);
    await new Promise((r) => setTimeout(r, 100));
    expect(tried.filter((t) => t === 'asked-to-wait')).toHaveLength(1);
    await queues.stop();
  });

  it('catches up a callback whose receiver asked to wait once that wait is over, not at its own back-off (callbacks trial: 429 with Retry-After: 1 came an hour late)', async () => {
    let up = false;
    const tried: string[] = [];
    const queues = createCallbackQueues({
      tryJob: async (j): Promise<TryOutcome> => {
        tried.push(j.eventId);
        // Down: 429 with Retry-After of 50 ms, the back-off an hour.
        if (!up) return { done: false, retryAt: Date.now() + 3_600_000, askedUntil: Date.now() + 50 };
        return { done: true, delivered: true };
      },
      onDone: () => undefined,
      onRescheduled: () => undefined,
      catchUpEveryMs: 0,
    });
    queues.add(job('while-down', 'm0'));
    await eventually(() => tried.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    up = true;
    queues.add(job('after', 'm1'));
    await eventually(() => queues.size === 0, 2000);
    expect(tried).toEqual(['while-down', 'after', 'while-down']);
    await queues.stop();
  });
});
