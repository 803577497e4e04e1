import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, setLogLevel } from '../../lib/log';
import { callbacksOwedPerApplication } from '../../lib/metrics';
import type { CallbackJob } from './callback-job';
import { encodeOwed } from './callback-outbox-format';
import { openCallbackOutbox, type CallbackOutbox, type OutboxConsumer } from './callback-outbox';

setLogLevel('error');
const log = createLogger({ test: 'callback-outbox-paging' });

const APPLICATIONS = ['tōmuri', '快', 'acme 👋🏽'];
const WORLD_TEXT = ['Kia ora, e hoa mā — tēnā koe', '测试 回复 你好', 'Ka kite anō 👋🏽🎉', 'Привет, мир', 'line\u2028separator'];
/** World text, and text from the whole of Unicode. */
const replyText = fc.oneof(fc.constantFrom(...WORLD_TEXT), fc.string({ unit: 'grapheme', maxLength: 30 }));

const jobOf = (eventId: string, applicationId: string, messageId: string, content: string): CallbackJob => ({
  eventId,
  applicationId,
  kind: 'reply',
  messageId,
  body: { id: messageId, content, source: '+6421000001' },
  createdAt: 1_700_000_000_000,
  attempt: 0,
  notBefore: 0,
});

/**
 * What the dispatcher's queues do with the jobs the outbox gives them: a FIFO
 * per message, whose first job may be "being tried" (then it cannot be taken back).
 */
function fakeQueues() {
  const messages = new Map<string, CallbackJob[]>();
  /** What went wrong inside a call from the outbox (which may run in a microtask, where a throw is only logged). */
  const wrong: string[] = [];
  const trying = new Set<string>();
  const held = new Set<string>();
  const consumer: OutboxConsumer = {
    add(job) {
      if (held.has(job.eventId)) wrong.push(`given twice: ${job.eventId}`);
      held.add(job.eventId);
      const list = messages.get(job.messageId) ?? [];
      list.push(job);
      messages.set(job.messageId, list);
    },
    canRemove: (job) => !(trying.has(job.messageId) && messages.get(job.messageId)?.[0]?.eventId === job.eventId),
    remove(job) {
      const list = messages.get(job.messageId)!;
      const at = list.findIndex((j) => j.eventId === job.eventId);
      // Only a message's newest jobs are taken back, so its order holds.
      if (at !== list.length - 1) wrong.push(`taken back from the middle of ${job.messageId}: ${job.eventId}`);
      list.splice(at, 1);
      if (list.length === 0) messages.delete(job.messageId);
      held.delete(job.eventId);
    },
  };
  return {
    consumer,
    held,
    wrong,
    messageIds: () => [...messages.keys()],
    /** The first job of a message, as the queues would try it. */
    head: (messageId: string) => messages.get(messageId)?.[0],
    finish(messageId: string): CallbackJob {
      const list = messages.get(messageId)!;
      const job = list.shift()!;
      if (list.length === 0) messages.delete(messageId);
      trying.delete(messageId);
      held.delete(job.eventId);
      return job;
    },
    replace(job: CallbackJob) {
      messages.get(job.messageId)![0] = job;
    },
    toggleTrying(messageId: string) {
      if (trying.has(messageId)) trying.delete(messageId);
      else trying.add(messageId);
    },
  };
}

/** Lets the outbox's reads from disk (queued as microtasks) run. */
const settleDown = () => new Promise<void>((r) => setImmediate(r));

type Op =
  | { owe: { app: number; message: number; content: string }[] }
  | { deliver: number }
  | { retry: number }
  | { trying: number }
  | { restart: { tornJournal: number; tornSegment: number } };

describe('callback outbox paging to disk', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  const tmpDir = (): string => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-outbox-paging-'));
    dirs.push(d);
    return d;
  };

  it('gives every owed job exactly once and in its message’s order, with memory never over its limit, across restarts and torn writes', async () => {
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({ owe: fc.array(fc.record({ app: fc.nat(2), message: fc.nat(3), content: replyText }), { minLength: 1, maxLength: 6 }) }),
      },
      { weight: 4, arbitrary: fc.record({ deliver: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ retry: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ trying: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ restart: fc.record({ tornJournal: fc.nat(), tornSegment: fc.nat() }) }) },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 20, max: 60 })),
        fc.array(opArb, { maxLength: 40 }),
        async (inMemory, ops) => {
          const dir = tmpDir();
          const open = (): CallbackOutbox => openCallbackOutbox({ dir, log, inMemory, compactBytes: 700, segmentBytes: 400 });
          let outbox = open();
          let queues = fakeQueues();
          outbox.attach(queues.consumer);
          let next = 0;
          /** Event ids owed per message, in the order owed; and what the receiver got, in order. */
          const owedOrder = new Map<string, string[]>();
          const got = new Map<string, string[]>();
          let outstanding = 0;

          const check = (): void => {
            expect(queues.wrong).toEqual([]);
            expect(outbox.inMemory).toBeLessThanOrEqual(inMemory);
            expect(new Set(outbox.owed().map((j) => j.eventId))).toEqual(queues.held);
            expect(outbox.size).toBe(outstanding);
          };
          const deliverHead = (pick: number): boolean => {
            const ids = queues.messageIds();
            if (ids.length === 0) return false;
            const messageId = ids[pick % ids.length]!;
            const job = queues.finish(messageId);
            outbox.settle([job.eventId]);
            got.set(messageId, [...(got.get(messageId) ?? []), job.eventId]);
            outstanding--;
            return true;
          };

          for (const op of ops) {
            if ('owe' in op) {
              const jobs = op.owe.map(({ app, message, content }) => jobOf(`e${next++}`, APPLICATIONS[app]!, `${APPLICATIONS[app]}/m${message}`, content));
              outbox.owe(jobs);
              for (const j of jobs) owedOrder.set(j.messageId, [...(owedOrder.get(j.messageId) ?? []), j.eventId]);
              outstanding += jobs.length;
            } else if ('deliver' in op) {
              deliverHead(op.deliver);
            } else if ('retry' in op) {
              const ids = queues.messageIds();
              const head = ids.length > 0 ? queues.head(ids[op.retry % ids.length]!) : undefined;
              if (head) {
                const retried = { ...head, attempt: head.attempt + 1, notBefore: head.createdAt + 1000 };
                queues.replace(retried);
                outbox.retry(retried);
              }
            } else if ('trying' in op) {
              const ids = queues.messageIds();
              if (ids.length > 0) queues.toggleTrying(ids[op.trying % ids.length]!);
            } else {
              // kill -9; then writes that were torn part-way and never acknowledged, in the journal and a queue's last segment.
              outbox.close();
              const torn = encodeOwed([jobOf('torn', 'tōmuri', 'torn', 'half 半分 ½ 👋🏽')]);
              fs.appendFileSync(path.join(dir, 'outbox.ndjson'), torn.subarray(0, op.restart.tornJournal % torn.length));
              const queueDir = path.join(dir, 'queues', Buffer.from('tōmuri').toString('hex'));
              const segments = fs.existsSync(queueDir) ? fs.readdirSync(queueDir).sort((a, b) => parseInt(a, 10) - parseInt(b, 10)) : [];
              if (segments.length > 0) fs.appendFileSync(path.join(queueDir, segments.at(-1)!), torn.subarray(0, op.restart.tornSegment % torn.length));
              outbox = open();
              queues = fakeQueues();
              outbox.attach(queues.consumer);
            }
            await settleDown();
            check();
          }
          // The receivers come back: everything is delivered.
          while (deliverHead(0)) {
            await settleDown();
            check();
          }
          expect(outbox.size).toBe(0);
          expect(got).toEqual(owedOrder);
          outbox.close();
          // Nothing is owed after a last restart either.
          const reopened = open();
          expect(reopened.size).toBe(0);
          reopened.close();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      ),
      { numRuns: 150 },
    );
    // Many small file writes per run: slow on a loaded machine, not wrong.
  }, 120_000);

  it('reads another application’s callbacks into memory while memory is full of one whose receiver is down', async () => {
    const outbox = openCallbackOutbox({ dir: tmpDir(), log, inMemory: 100 });
    const queues = fakeQueues();
    outbox.attach(queues.consumer);
    const slow = Array.from({ length: 1000 }, (_, i) => jobOf(`slow-${i}`, 'tōmuri', `tōmuri/m${i % 37}`, 'Kia ora 👋🏽'));
    outbox.owe(slow);
    await settleDown();
    expect(outbox.inMemory).toBe(100);
    expect(outbox.onDisk).toBe(900);

    outbox.owe(Array.from({ length: 20 }, (_, i) => jobOf(`fast-${i}`, '快', `快/m${i}`, '测试 回复')));
    await settleDown();
    expect(queues.wrong).toEqual([]);
    expect(outbox.inMemory).toBeLessThanOrEqual(100);
    expect([...queues.held].filter((id) => id.startsWith('fast-'))).toHaveLength(20);
    for (let i = 0; i < 20; i++) {
      const job = queues.finish(`快/m${i}`);
      outbox.settle([job.eventId]);
    }
    await settleDown();

    // The slow receiver comes back: its callbacks come in the order they were owed, each once.
    const delivered: string[] = [];
    while (queues.messageIds().length > 0) {
      for (const messageId of queues.messageIds()) {
        const job = queues.finish(messageId);
        outbox.settle([job.eventId]);
        delivered.push(job.eventId);
      }
      await settleDown();
      expect(outbox.inMemory).toBeLessThanOrEqual(100);
    }
    expect(delivered.sort()).toEqual(slow.map((j) => j.eventId).sort());
    expect(outbox.size).toBe(0);
    outbox.close();
  });

  it('makes room for a fourth application while memory is full of three whose receivers are down', async () => {
    const outbox = openCallbackOutbox({ dir: tmpDir(), log, inMemory: 100 });
    const queues = fakeQueues();
    outbox.attach(queues.consumer);
    for (const [app, n] of [
      ['tōmuri', 33],
      ['快', 33],
      ['Привет', 32],
    ] as const)
      outbox.owe(Array.from({ length: n }, (_, i) => jobOf(`${app}-${i}`, app, `${app}/m${i}`, 'Kia ora 👋🏽')));
    await settleDown();
    expect(outbox.inMemory).toBe(98);
    outbox.owe(Array.from({ length: 10 }, (_, i) => jobOf(`acme-${i}`, 'acme 👋🏽', `acme/m${i}`, '测试 回复')));
    await settleDown();
    expect(queues.wrong).toEqual([]);
    expect([...queues.held].filter((id) => id.startsWith('acme-'))).toHaveLength(10);
    expect(outbox.inMemory).toBeLessThanOrEqual(100);
    outbox.close();
  });

  it('makes room for another application once the full application’s tries have failed, though every one was being tried when it came', async () => {
    const outbox = openCallbackOutbox({ dir: tmpDir(), log, inMemory: 10 });
    const queues = fakeQueues();
    outbox.attach(queues.consumer);
    outbox.owe(Array.from({ length: 10 }, (_, i) => jobOf(`slow-${i}`, 'tōmuri', `tōmuri/m${i}`, 'Kia ora 👋🏽')));
    for (let i = 0; i < 10; i++) queues.toggleTrying(`tōmuri/m${i}`);
    outbox.owe([jobOf('fast-0', '快', '快/m0', '测试 回复')]);
    await settleDown();
    expect(queues.held.has('fast-0')).toBe(false);
    // The receiver is down: each try fails and waits for its next one, and nothing else happens.
    for (let i = 0; i < 10; i++) {
      queues.toggleTrying(`tōmuri/m${i}`);
      const head = queues.head(`tōmuri/m${i}`)!;
      const retried = { ...head, attempt: 1, notBefore: Date.now() + 60_000 };
      queues.replace(retried);
      outbox.retry(retried);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(queues.wrong).toEqual([]);
    expect(queues.held.has('fast-0')).toBe(true);
    expect(outbox.inMemory).toBeLessThanOrEqual(10);
    outbox.close();
  });

  it('reads only what fits in memory at a restart and leaves the rest on disk', async () => {
    const dir = tmpDir();
    const first = openCallbackOutbox({ dir, log, inMemory: 500 });
    first.owe(Array.from({ length: 20_000 }, (_, i) => jobOf(`e${i}`, 'tōmuri', `tōmuri/m${i}`, 'Kia ora, e hoa mā — tēnā koe 👋🏽 测试')));
    await settleDown();
    first.close();
    expect(fs.statSync(path.join(dir, 'outbox.ndjson')).size).toBeLessThan(500 * 300);

    const again = openCallbackOutbox({ dir, log, inMemory: 500 });
    expect(again.inMemory).toBe(500);
    expect(again.onDisk).toBe(19_500);
    const queues = fakeQueues();
    again.attach(queues.consumer);
    expect(queues.head('tōmuri/m0')?.eventId).toBe('e0');
    expect(queues.head('tōmuri/m500')).toBeUndefined();
    again.close();
  });

  it('counts what each application is owed, in memory and on disk, so an SRE sees whose receiver is behind', async () => {
    const owedOf = async (): Promise<Record<string, number>> =>
      Object.fromEntries((await callbacksOwedPerApplication.get()).values.map((v) => [v.labels.application, v.value]));
    const outbox = openCallbackOutbox({ dir: tmpDir(), log, inMemory: 100 });
    outbox.owe(Array.from({ length: 1_000 }, (_, i) => jobOf(`slow${i}`, 'tōmuri', `tōmuri/m${i}`, 'Kia ora, e hoa mā 👋🏽')));
    outbox.owe([jobOf('quick0', '快', '快/m0', '你好'), jobOf('quick1', '快', '快/m1', '你好')]);
    await settleDown();
    expect(outbox.onDisk).toBeGreaterThan(0);
    expect(await owedOf()).toMatchObject({ tōmuri: 1_000, 快: 2 });

    outbox.settle(['quick0', 'quick1', 'slow0']);
    await settleDown();
    // An application owed nothing any more reads 0 rather than vanishing, so an alert on it resolves.
    expect(await owedOf()).toMatchObject({ tōmuri: 999, 快: 0 });
    outbox.close();
    // A closed outbox owes nothing in this process.
    expect(await owedOf()).toMatchObject({ tōmuri: 0, 快: 0 });
  });
});
