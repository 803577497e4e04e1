import { describe, expect, it } from 'vitest';
import type { Bus, BusRecord } from '../ports/bus';
import { topicName } from '../ports/bus';
import { decodeJob } from '../ports/bus-payloads';
import type { MessageHistory, MessageRecord, StatusEvent } from '../ports/message-history';
import { createMemoryState } from '../adapters/memory-state';
import { HermodError } from '../../lib/errors';
import { createMessageIntake, type NewMessage } from './message-intake';
import { createRecentMessages } from './recent-messages';
import { createStatusRecorder, type StatusChange, type StatusRecorder } from './status-recorder';

/**
 * A bus whose publishes to the topics in `down` fail, as Kafka's do while a
 * partition's leader is being elected, and which refuses more than
 * `maxRecords` in one publish as too large.
 */
function outageBus(maxRecords = Number.POSITIVE_INFINITY) {
  const down = new Set<string>();
  const published = new Map<string, BusRecord[]>();
  let failures = 0;
  const bus = {
    async publish(topic: string, records: readonly BusRecord[]) {
      if (records.length > maxRecords)
        throw new HermodError(
          'body_too_large',
          `Kafka publishing to ${topic} failed: The request included a message larger than the max message size the server will accept`,
        );
      if (down.has(topic)) {
        failures += 1;
        throw new HermodError(
          'unavailable',
          `publishing to ${topic}: There is no leader for this topic-partition as we are in the middle of a leadership election`,
        );
      }
      published.set(topic, [...(published.get(topic) ?? []), ...records]);
    },
  } as unknown as Bus;
  return { bus, down, published, failures: () => failures };
}

function intakeOn(
  bus: Bus,
  dispatchErrors: unknown[] = [],
  reports: { givenUp: boolean; unsent: number }[] = [],
  maxHandOffWaiting?: number,
  state = createMemoryState(),
) {
  const statuses: StatusChange[] = [];
  const recorder: StatusRecorder = {
    async record(changes) {
      statuses.push(...changes);
      return changes.map(() => true);
    },
    onApplied: () => undefined,
    announce: () => undefined,
    drain: async () => undefined,
  };
  let numeric = 1;
  const intake = createMessageIntake({
    history: { insertMessages: async () => undefined } as unknown as MessageHistory,
    state,
    bus,
    recorder,
    recent: createRecentMessages(),
    numericIds: () => numeric++,
    onDispatchError: (err, at) => {
      dispatchErrors.push(err);
      reports.push(at);
    },
    dispatchRetryMs: 10,
    maxHandOffWaiting,
  });
  return { intake, statuses };
}

const send = (channel: string, destination: string, content: string): NewMessage => ({
  applicationId: 'acme',
  channel,
  destination,
  source: 'HERMOD',
  content,
  reference: '',
  messageClass: '',
  mask: '',
  smsClass: 1,
  scheduledAt: 0,
  integrationId: '',
  via: 'sms_v2',
});

/** History that stores no message but keeps the status events written to it (after `accepted`), and reads the latest. */
function historyKeepingEvents() {
  const events: StatusEvent[] = [];
  const all: StatusEvent[] = [];
  const history = {
    insertMessages: async (_records: readonly MessageRecord[], accepted: readonly StatusEvent[] = []) => void all.push(...accepted),
    appendEvents: async (batch: readonly StatusEvent[]) => {
      events.push(...batch);
      all.push(...batch);
    },
    latestStatuses: async (ids: readonly string[]) => {
      const latest = new Map<string, { status: StatusEvent['status']; at: number }>();
      for (const e of all) if (ids.includes(e.messageId)) latest.set(e.messageId, { status: e.status, at: e.at });
      return latest;
    },
  } as unknown as MessageHistory;
  return { history, events };
}

const until = async (check: () => boolean, ms = 5000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('handing accepted messages to their channel', () => {
  it('hands a message over once the bus is back when its first hand-off failed, without waiting for a restart', async () => {
    const { bus, down, published, failures } = outageBus();
    const errors: unknown[] = [];
    const { intake, statuses } = intakeOn(bus, errors);
    down.add(topicName('sms'));
    const [result] = await intake.accept([send('sms', '+64211234567', 'Kia ora, e hoa mā 👋🏽 你好')]);
    expect(result).toMatchObject({ ok: true });
    await until(() => failures() >= 3);
    expect(errors.length).toBeGreaterThanOrEqual(3);
    expect(published.get(topicName('sms'))).toBeUndefined();

    down.clear();
    await until(() => (published.get(topicName('sms'))?.length ?? 0) > 0);
    const jobs = published.get(topicName('sms'))!.map((r) => decodeJob(r.value));
    expect(jobs.map((j) => j.content)).toEqual(['Kia ora, e hoa mā 👋🏽 你好']);
    await until(() => statuses.some((s) => s.status === 'queued'));
    expect(statuses.filter((s) => s.status === 'queued').map((s) => s.messageId)).toEqual([result!.ok ? result!.id : '']);
    await intake.drain();
  });

  it('answers a stored send as accepted and hands it over once hot state takes its status again, when hot state failed under it (a Redis master failing over)', async () => {
    const { bus, published } = outageBus();
    const memory = createMemoryState();
    let refusals = 3;
    const state = {
      ...memory,
      async advanceStatuses(advances: Parameters<typeof memory.advanceStatuses>[0]) {
        if (refusals > 0 && advances.some((a) => a.status === 'accepted')) {
          refusals -= 1;
          throw new HermodError('unavailable', 'advancing statuses: MOVED 12882 127.0.0.1:7105', { retryable: true });
        }
        return memory.advanceStatuses(advances);
      },
    };
    const { intake, statuses } = intakeOn(bus, [], [], undefined, state);
    const [result] = await intake.accept([send('sms', '+64211234568', 'Tēnā koe — 你好 🌿')]);
    expect(result).toMatchObject({ ok: true });
    const id = result!.ok ? result!.id : '';
    await until(() => (published.get(topicName('sms'))?.length ?? 0) > 0);
    expect(published.get(topicName('sms'))!.map((r) => decodeJob(r.value).id)).toEqual([id]);
    expect(refusals).toBe(0);
    // Hot state took the status it refused at first (queued is the recorder's, a stand-in here).
    expect((await memory.getStatus(id))?.status).toBe('accepted');
    await until(() => statuses.some((s) => s.status === 'queued'));
    await intake.drain();
  });

  it('retries only the channel whose topic failed, so the other channel gets each message once', async () => {
    const { bus, down, published } = outageBus();
    const { intake } = intakeOn(bus);
    down.add(topicName('sms'));
    await Promise.all([intake.accept([send('sms', '+64211234567', 'Tēnā koe')]), intake.accept([send('email', 'hine@example.co.nz', 'Mōrena ☕')])]);
    await until(() => (published.get(topicName('email'))?.length ?? 0) > 0);
    await new Promise((r) => setTimeout(r, 100));
    down.clear();
    await until(() => (published.get(topicName('sms'))?.length ?? 0) > 0);
    await intake.drain();
    expect(published.get(topicName('email'))!.map((r) => decodeJob(r.value).content)).toEqual(['Mōrena ☕']);
    expect(published.get(topicName('sms'))!.map((r) => decodeJob(r.value).content)).toEqual(['Tēnā koe']);
  });

  it('keeps messages accepted during an outage in order behind the ones that failed', async () => {
    const { bus, down, published } = outageBus();
    const { intake } = intakeOn(bus);
    down.add(topicName('sms'));
    for (const text of ['one', 'two', 'three']) await intake.accept([send('sms', '+64211234567', text)]);
    await new Promise((r) => setTimeout(r, 50));
    down.clear();
    await until(() => (published.get(topicName('sms'))?.length ?? 0) === 3);
    await intake.drain();
    expect(published.get(topicName('sms'))!.map((r) => decodeJob(r.value).content)).toEqual(['one', 'two', 'three']);
  });

  it('stops retrying when core stops during an outage, leaving the stored messages to recovery at the next start', async () => {
    const { bus, down, failures } = outageBus();
    const { intake } = intakeOn(bus);
    down.add(topicName('sms'));
    await intake.accept([send('sms', '+64211234567', 'ka kite anō')]);
    await until(() => failures() >= 2);
    const drained = await Promise.race([intake.drain().then(() => 'drained'), new Promise((r) => setTimeout(() => r('hung'), 2000))]);
    expect(drained).toBe('drained');
  });

  it('answers an Intelligent Messaging send once its hand-off was tried, but holds a campaign page until the bus takes it', async () => {
    const { bus, down, published, failures } = outageBus();
    const { intake } = intakeOn(bus);
    down.add(topicName('sms'));
    const record = (id: string, via: string) => ({
      ...send('sms', '+64211234567', `${via} — Kia ora 👋🏽`),
      id,
      numericId: 1,
      direction: 'MT' as const,
      segments: 1,
      acceptedAt: Date.now(),
      replyTo: '',
      via,
    });
    const [im] = await intake.acceptRecords([record('im-1', 'im_v1')]);
    expect(im).toMatchObject({ ok: true });

    let pageDone = false;
    const page = intake.acceptRecords([record('c-1', 'campaign')], { untilHandedOver: true }).then(() => (pageDone = true));
    await until(() => failures() >= 4);
    expect(pageDone).toBe(false);
    down.clear();
    await page;
    expect(
      published
        .get(topicName('sms'))!
        .map((r) => decodeJob(r.value).id)
        .sort(),
    ).toEqual(['c-1', 'im-1']);
    await intake.drain();
  });

  it('splits a hand-off the bus calls too large, and gives up only on a single message it refuses so', async () => {
    const { bus, published } = outageBus(3);
    const reports: { givenUp: boolean; unsent: number }[] = [];
    const { intake } = intakeOn(bus, [], reports);
    const texts = Array.from({ length: 10 }, (_, i) => `Tēnā koe ${i} 你好`);
    await intake.accept(texts.map((t, i) => send('sms', `+6421000000${i}`, t)));
    await until(() => (published.get(topicName('sms'))?.length ?? 0) === 10);
    await intake.drain();
    expect(published.get(topicName('sms'))!.map((r) => decodeJob(r.value).content)).toEqual(texts);
    expect(reports.every((r) => !r.givenUp)).toBe(true);

    const never = outageBus(0);
    const gaveUp: { givenUp: boolean; unsent: number }[] = [];
    const second = intakeOn(never.bus, [], gaveUp).intake;
    await second.accept([send('sms', '+64211234567', 'ka kite')]);
    await until(() => gaveUp.length > 0);
    expect(gaveUp).toEqual([expect.objectContaining({ givenUp: true, unsent: 1 })]);
    await second.drain();
  });

  it('ends a message the bus refuses alone as too large `rejected`, with the bus’s reason, instead of leaving it queued for ever', async () => {
    const never = outageBus(0);
    const reports: { rejected?: boolean; messageId?: string; applicationId?: string }[] = [];
    const { intake, statuses } = intakeOn(never.bus, [], reports as { givenUp: boolean; unsent: number }[]);
    const [accepted] = await intake.accept([send('email', 'kaiako@kura.example.nz', `Kia ora e te whānau 🌿 ${'ā'.repeat(2000)}`)]);
    await until(() => statuses.some((s) => s.status === 'rejected'));
    await intake.drain();
    const id = accepted!.ok ? accepted!.id : '';
    expect(statuses.filter((s) => s.messageId === id).map((s) => s.status)).toEqual(['queued', 'rejected']);
    expect(statuses.find((s) => s.status === 'rejected')).toMatchObject({
      errorCode: 'body_too_large',
      detail: expect.stringContaining('larger than the max message size'),
    });
    // The operator's log line names the message and its application.
    expect(reports).toContainEqual(expect.objectContaining({ rejected: true, messageId: id, applicationId: 'acme' }));
  });

  it('ends a stored message too large for the bus rejected when recovery hands it over at a start, and lets the start go on', async () => {
    const never = outageBus(0);
    const { intake, statuses } = intakeOn(never.bus);
    const stored: MessageRecord = {
      ...send('sms', '+64211234567', 'Kia ora anō 🌿 — he karere i mua i te tīmatanga'),
      id: 'stored-before-the-start',
      numericId: 7,
      direction: 'MT',
      segments: 1,
      acceptedAt: Date.now() - 60_000,
      replyTo: '',
    };
    // Recovery awaits this at every start: a refusal must not throw out of it.
    await intake.dispatch([stored]);
    await until(() => statuses.some((s) => s.messageId === stored.id && s.status === 'rejected'));
    expect(statuses.find((s) => s.status === 'rejected')).toMatchObject({ messageId: stored.id, errorCode: 'body_too_large' });
    await intake.drain();
  });

  it('refuses new sends as unavailable while too many accepted ones wait for the bus, and takes them again once it is back', async () => {
    const { bus, down, published } = outageBus();
    const { intake } = intakeOn(bus, [], [], 3);
    down.add(topicName('sms'));
    const first = await intake.accept([1, 2, 3].map((n) => send('sms', `+6421000000${n}`, `Kia ora ${n} 👋🏽`)));
    expect(first.every((r) => r.ok)).toBe(true);
    await new Promise((r) => setTimeout(r, 30));
    const refused = await intake.accept([send('sms', '+64211234567', 'one too many')]);
    expect(refused).toEqual([{ ok: false, error: expect.objectContaining({ code: 'unavailable', retryable: true }) }]);

    down.clear();
    await until(() => (published.get(topicName('sms'))?.length ?? 0) === 3);
    const again = await intake.accept([send('sms', '+64211234567', 'ka pai')]);
    expect(again[0]).toMatchObject({ ok: true });
    await until(() => (published.get(topicName('sms'))?.length ?? 0) === 4);
    await intake.drain();
  });
});

describe('the queued status on a bus whose publish returns after the worker has sent', () => {
  it('ends a scheduled message blocked when its handset opted out or was block-listed after it was scheduled, and sends the rest', async () => {
    const { bus, published } = outageBus();
    const state = createMemoryState();
    const { intake, statuses } = intakeOn(bus, [], [], undefined, state);
    const at = Date.now() + 1500;
    const results = await intake.accept(
      ['+6421000791', '+6421000792', '+6421000793'].map((to) => ({ ...send('sms', to, 'Kia ora — te pānui o te wiki 📣'), scheduledAt: at })),
    );
    const [stopped, blocked, kept] = results.map((r) => (r.ok ? r.id : ''));
    // After scheduling: the first handset replies STOP, an operator blocks the second.
    await state.setOptOuts([{ applicationId: 'acme', handset: '+6421000791', optedOut: true }]);
    await state.setBlocks([{ scope: 'acme', prefix: '+6421000792', blocked: true }]);

    await until(() => statuses.filter((s) => s.status === 'blocked').length === 2 && (published.get(topicName('sms')) ?? []).length === 1, 5000);
    expect(statuses.filter((s) => s.status === 'blocked').map((s) => [s.messageId, s.detail])).toEqual([
      [stopped, 'destination opted out'],
      [blocked, 'destination blocked by the operator (+6421000792)'],
    ]);
    expect((published.get(topicName('sms')) ?? []).map((r) => decodeJob(r.value).id)).toEqual([kept]);
    await intake.drain();
  });

  it('answers at once a hand-over of no messages (a recovery page of held campaign messages only hands the rest over: none)', async () => {
    const { bus } = outageBus();
    const { intake } = intakeOn(bus);
    const answered = await Promise.race([
      Promise.all([intake.dispatch([]), intake.dispatchHeld([])]).then(() => 'answered'),
      new Promise((r) => setTimeout(() => r('still waiting'), 1000)),
    ]);
    expect(answered).toBe('answered');
    await intake.drain();
  });

  it('ends a held message blocked when its handset opted out or was block-listed while an operator held it (a paused campaign), and hands over the rest', async () => {
    const { bus, published } = outageBus();
    const state = createMemoryState();
    const { intake, statuses } = intakeOn(bus, [], [], undefined, state);
    const held = ['+6421000794', '+6421000795', '+6421000796'].map((to, i) => ({
      ...send('sms', to, 'Hoko nui — 大促销 🛍️'),
      id: `held-${i}`,
      numericId: 1_000 + i,
      acceptedAt: Date.now() - 60_000,
      direction: 'MT' as const,
      replyTo: '',
      segments: 1,
    }));
    await state.setOptOuts([{ applicationId: 'acme', handset: '+6421000794', optedOut: true }]);
    await state.setBlocks([{ scope: 'acme', prefix: '+6421000795', blocked: true }]);

    await intake.dispatchHeld(held);
    expect(statuses.filter((s) => s.status === 'blocked').map((s) => [s.messageId, s.detail])).toEqual([
      ['held-0', 'destination opted out'],
      ['held-1', 'destination blocked by the operator (+6421000795)'],
    ]);
    expect((published.get(topicName('sms')) ?? []).map((r) => decodeJob(r.value).id)).toEqual(['held-2']);
    await intake.drain();
  });

  it('records queued before the worker can report sent, so neither it nor its callback is lost', async () => {
    const state = createMemoryState();
    const { history, events } = historyKeepingEvents();
    const recorder = createStatusRecorder({ history, state });
    const told: string[] = [];
    recorder.onApplied((c) => told.push(c.status));
    // Kafka acknowledges a publish after a few milliseconds; a worker may have taken the job, sent it and reported by then.
    const bus = {
      async publish(topic: string, records: readonly BusRecord[]) {
        if (topic !== topicName('sms')) return;
        const ids = records.map((r) => decodeJob(r.value).id);
        await recorder.record(ids.map((id) => ({ messageId: id, applicationId: 'acme', channel: 'sms', status: 'sent' as const, at: Date.now() })));
      },
    } as unknown as Bus;
    const intake = createMessageIntake({ history, state, bus, recorder, recent: createRecentMessages(), numericIds: () => 1, dispatchRetryMs: 10 });
    const [result] = await intake.accept([send('sms', '+64211234567', 'Kia ora — 你好 👋🏽')]);
    expect(result).toMatchObject({ ok: true });
    await until(() => told.includes('sent'));
    await intake.drain();
    expect(told).toEqual(['accepted', 'queued', 'sent']);
    expect(events.map((e) => e.status)).toEqual(['queued', 'sent']);
  });
});

describe('the queued status when hot state is away as the message is handed over', () => {
  /**
   * Hot state that goes away (a Redis restart, ioredis's queue off) right after it took the messages' `accepted`:
   * while `away` it refuses the hand-off's `queued`.
   */
  function awayState() {
    const state = createMemoryState();
    const gate = { away: false };
    const refuse = (advances: readonly { status: string }[]): void => {
      if (gate.away && advances.some((a) => a.status === 'queued')) throw new HermodError('unavailable', 'hot state: Connection is closed.');
    };
    const advance = state.advanceStatuses.bind(state);
    const noting = state.advanceStatusesNotingSkips.bind(state);
    state.advanceStatuses = async (advances) => (refuse(advances), advance(advances));
    state.advanceStatusesNotingSkips = async (advances) => (refuse(advances), noting(advances));
    return { state, gate };
  }

  it('tells queued before the sent a worker reported once hot state was back, when queued could not be recorded but the publish went through', async () => {
    const { state, gate } = awayState();
    const { history, events } = historyKeepingEvents();
    const recorder = createStatusRecorder({ history, state });
    const told: { id: string; status: string }[] = [];
    recorder.onApplied((c) => told.push({ id: c.messageId, status: c.status }));
    const worker: string[] = [];
    // The bus is on another server and stays up: the job is taken; hot state comes back before the worker reports.
    const bus = {
      async publish(topic: string, records: readonly BusRecord[]) {
        if (topic !== topicName('sms')) return;
        for (const r of records) worker.push(decodeJob(r.value).id);
      },
    } as unknown as Bus;
    const intake = createMessageIntake({ history, state, bus, recorder, recent: createRecentMessages(), numericIds: () => 1, dispatchRetryMs: 10 });
    gate.away = true;
    const accepted = await intake.accept([send('sms', '+64211234571', 'Kia ora e te whānau — 你好 👋🏽'), send('sms', '+64211234572', 'مرحبا')]);
    const ids = accepted.map((r) => (r.ok ? r.id : ''));
    await until(() => worker.length === 2);
    await new Promise((r) => setTimeout(r, 50));
    gate.away = false;
    await recorder.record(worker.map((id) => ({ messageId: id, applicationId: 'acme', channel: 'sms', status: 'sent' as const, at: Date.now() })));
    await until(() => told.filter((t) => t.status === 'sent').length === 2);
    await intake.drain();
    for (const id of ids) expect(told.filter((t) => t.id === id).map((t) => t.status)).toEqual(['accepted', 'queued', 'sent']);
    for (const id of ids) expect(events.filter((e) => e.messageId === id).map((e) => e.status)).toEqual(['queued', 'sent']);
  });

  it('records queued again when hot state took it but its answer was lost (a command timeout in a Redis stall)', async () => {
    const state = createMemoryState();
    const noting = state.advanceStatusesNotingSkips.bind(state);
    let lostAnswers = 1;
    state.advanceStatusesNotingSkips = async (advances) => {
      const outcomes = await noting(advances);
      if (advances.some((a) => a.status === 'queued') && lostAnswers-- > 0) throw new HermodError('unavailable', 'hot state: Command timed out');
      return outcomes;
    };
    const { history, events } = historyKeepingEvents();
    const recorder = createStatusRecorder({ history, state, lostCheckMs: 10 });
    const told: string[] = [];
    recorder.onApplied((c) => told.push(c.status));
    const bus = { publish: async () => undefined } as unknown as Bus;
    const intake = createMessageIntake({ history, state, bus, recorder, recent: createRecentMessages(), numericIds: () => 1, dispatchRetryMs: 10 });
    await intake.accept([send('sms', '+64211234574', 'Kia ora — he karere roa 📨')]);
    await until(() => told.includes('queued'), 5000);
    await intake.drain();
    expect(told).toEqual(['accepted', 'queued']);
    expect(events.map((e) => e.status)).toEqual(['queued']);
  });

  it("tells queued before sent on the core that applies the sent, when another core's intake could not record it", async () => {
    const { state, gate } = awayState();
    const { history, events } = historyKeepingEvents();
    const intakeCore = createStatusRecorder({ history, state });
    const statusCore = createStatusRecorder({ history, state });
    const told: { core: string; status: string }[] = [];
    intakeCore.onApplied((c) => told.push({ core: 'intake', status: c.status }));
    statusCore.onApplied((c) => told.push({ core: 'status', status: c.status }));
    const worker: string[] = [];
    const bus = {
      async publish(topic: string, records: readonly BusRecord[]) {
        if (topic === topicName('sms')) for (const r of records) worker.push(decodeJob(r.value).id);
      },
    } as unknown as Bus;
    const intake = createMessageIntake({ history, state, bus, recorder: intakeCore, recent: createRecentMessages(), numericIds: () => 1, dispatchRetryMs: 10 });
    gate.away = true;
    await intake.accept([send('sms', '+64211234573', 'Kia ora — ngā mihi 🌿')]);
    await until(() => worker.length === 1);
    gate.away = false;
    // The worker's report is keyed by message id: another core's status consumer takes it.
    await statusCore.record([{ messageId: worker[0]!, applicationId: 'acme', channel: 'sms', status: 'sent', at: Date.now() }]);
    await intake.drain();
    expect(told).toEqual([
      { core: 'intake', status: 'accepted' },
      { core: 'status', status: 'queued' },
      { core: 'status', status: 'sent' },
    ]);
    expect(events.map((e) => e.status)).toEqual(['queued', 'sent']);
  });
});

describe('sends with an Idempotency-Key', () => {
  it('stores and hands over a keyed send once: the same send again, through a new intake after a restart, gets the first message as a replay', async () => {
    const kept = new Map<string, MessageRecord>();
    const history = {
      insertMessages: async (records: MessageRecord[]) => {
        for (const r of records) kept.set(r.id, r);
      },
      findMessages: async (ids: string[]) => ids.flatMap((id) => (kept.has(id) ? [kept.get(id)!] : [])),
      keyedMessagesSince: async (since: number) => [...kept.values()].filter((m) => m.acceptedAt >= since),
    } as unknown as MessageHistory;
    const { bus, published } = outageBus();
    const start = (firstNumericId: number) => {
      let numeric = firstNumericId;
      return createMessageIntake({
        history,
        state: createMemoryState(),
        bus,
        recorder: {
          record: async (c) => c.map(() => true),
          onApplied: () => undefined,
          announce: () => undefined,
          drain: async () => undefined,
        },
        recent: createRecentMessages(),
        numericIds: () => numeric++,
      });
    };
    const keyed = { ...send('sms', '+64211234567', 'Kia ora, tō tono kua tae mai 🌿'), dedupKey: 'request-a.0' };
    const first = start(1);
    const [a] = await first.accept([keyed]);
    await first.drain();
    const again = start(1000);
    const [b, other, plain] = await again.accept([
      keyed,
      { ...keyed, dedupKey: 'request-b.0' },
      send('sms', '+64211234567', 'Kia ora, tō tono kua tae mai 🌿'),
    ]);
    await again.drain();
    expect(b).toEqual({ ...a, replayed: true });
    expect(a).toMatchObject({ ok: true, numericId: 1 });
    expect(other).toMatchObject({ ok: true, numericId: 1001 });
    expect(plain).toMatchObject({ ok: true, numericId: 1002 });
    expect(new Set([a, other, plain].map((r) => (r!.ok ? r!.id : ''))).size).toBe(3);
    expect(published.get(topicName('sms'))!.map((r) => decodeJob(r.value).id)).toEqual([a, other, plain].map((r) => (r!.ok ? r!.id : '')));

    // Records whose caller derived their ids from a key (Intelligent Messaging): the same, by their id.
    const record: MessageRecord = { ...keyed, id: 'im-keyed-1', numericId: 5000, direction: 'MT', segments: 1, acceptedAt: Date.now(), replyTo: '' };
    const third = start(2000);
    const [c] = await third.acceptRecords([record], { keyed: true });
    const [d] = await third.acceptRecords([{ ...record, numericId: 5001 }], { keyed: true });
    await third.drain();
    expect(d).toEqual({ ...c, replayed: true });
    expect(c).toMatchObject({ ok: true, id: 'im-keyed-1', numericId: 5000 });
    expect(published.get(topicName('sms'))!.filter((r) => decodeJob(r.value).id === 'im-keyed-1')).toHaveLength(1);
  });
});
