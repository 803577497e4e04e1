import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../adapters/memory-bus';
import { createMemoryState } from '../adapters/memory-state';
import { topicName, type Bus, type Subscription } from '../ports/bus';
import type { HotState } from '../ports/state';
import { encodeStatus } from '../ports/bus-payloads';
import type { MessageHistory } from '../ports/message-history';
import { createStatusRecorder, type StatusChange, type StatusRecorder } from './status-recorder';
import { startStatusConsumer } from './status-consumer';
import { eventually } from '../../test/support/eventually';
import { createLogger, type Logger } from '../../lib/log';
import { unmatchedReports } from '../../lib/metrics';

describe('status consumer', () => {
  let subscription: Subscription | undefined;
  afterEach(async () => subscription?.close());
  /** A recorder and the consumer over these; what the recorder applied (told to clients), in order. */
  const consume = async (bus: Bus, state: HotState, history: MessageHistory): Promise<StatusChange[]> => {
    const recorder = createStatusRecorder({ history, state });
    const told: StatusChange[] = [];
    recorder.onApplied((c) => told.push(c));
    subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }) });
    return told;
  };

  it('matches a thousand receipts known only by carrier id, which hot state lost in a restart, with one history query', async () => {
    const bus = createMemoryBus({ partitions: 8 });
    const state = createMemoryState();
    // Hot state still knows one of them; history knows the rest.
    await state.putCarrierIds([{ carrierId: 'carrier-0', messageId: 'message-0' }]);
    const queries: string[][] = [];
    const history = {
      async findMessageIdsByCarrierIds(carrierIds: readonly string[]) {
        queries.push([...carrierIds]);
        return new Map(carrierIds.map((c) => [c, c.replace('carrier', 'message')]));
      },
      latestStatuses: async () => new Map(),
    } as unknown as MessageHistory;
    const recorded: StatusChange[] = [];
    const recorder = { record: async (changes: readonly StatusChange[]) => (recorded.push(...changes), changes.map(() => true)) } as unknown as StatusRecorder;
    subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }) });

    await bus.publish(
      topicName('status'),
      Array.from({ length: 1000 }, (_, i) => ({
        key: `carrier-${i}`,
        value: encodeStatus({ id: '', carrierId: `carrier-${i}`, status: 'received', at: 1_700_000_000_000 + i, channel: 'sms', detail: 'Kāore he raru' }),
      })),
    );

    await eventually(() => recorded.length === 1000);
    expect(recorded.map((c) => c.messageId).sort()).toEqual(Array.from({ length: 1000 }, (_, i) => `message-${i}`).sort());
    expect(queries.flat().sort()).toEqual(Array.from({ length: 999 }, (_, i) => `carrier-${i + 1}`).sort());
    // One query per batch the bus hands over (one per partition here, at most), never one per receipt.
    expect(queries.length).toBeLessThanOrEqual(8);
  });

  it("passes a long message's other parts' carrier ids on to the recorder with its submitted, for history to keep", async () => {
    const bus = createMemoryBus({ partitions: 2 });
    const state = createMemoryState();
    const history = { latestStatuses: async () => new Map() } as unknown as MessageHistory;
    const recorded: StatusChange[] = [];
    const recorder = { record: async (changes: readonly StatusChange[]) => (recorded.push(...changes), changes.map(() => true)) } as unknown as StatusRecorder;
    subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }) });
    await bus.publish(topicName('status'), [
      {
        key: 'message-1',
        value: encodeStatus({
          id: 'message-1',
          carrierId: 'smsc:ā1',
          partCarrierIds: ['smsc:ā2', 'smsc:ā3'],
          status: 'submitted',
          at: 1_700_000_000_000,
          channel: 'sms',
        }),
      },
    ]);
    await eventually(() => recorded.length === 1);
    expect(recorded[0]).toMatchObject({ messageId: 'message-1', status: 'submitted', carrierId: 'smsc:ā1', partCarrierIds: ['smsc:ā2', 'smsc:ā3'] });
  });

  it("looks up receipts of carrier ids nobody knows (another system's, redelivered) less and less often, and matches a new one meanwhile", async () => {
    const bus = createMemoryBus({ partitions: 2 });
    const state = createMemoryState();
    const asked: string[] = [];
    const history = {
      async findMessageIdsByCarrierIds(carrierIds: readonly string[]) {
        asked.push(...carrierIds);
        return new Map(carrierIds.filter((c) => c === 'smsc:新しい').map((c) => [c, 'message-new']));
      },
      latestStatuses: async () => new Map(),
    } as unknown as MessageHistory;
    const recorded: StatusChange[] = [];
    const recorder = { record: async (changes: readonly StatusChange[]) => (recorded.push(...changes), changes.map(() => true)) } as unknown as StatusRecorder;
    subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }) });
    const receipt = (carrierId: string) => ({
      key: carrierId,
      value: encodeStatus({ id: '', carrierId, status: 'received', at: 1_700_000_000_000, channel: 'sms', detail: 'Kua tae' }),
    });

    await bus.publish(
      topicName('status'),
      Array.from({ length: 2500 }, (_, i) => receipt(`elsewhere:${i}`)),
    );
    await new Promise((r) => setTimeout(r, 9_500));
    // Looked up on arrival, then at 0.5, 1, 1.5, 2, 3, 5 and 9 s: 8 times each, not 20 (once every half second).
    const timesAsked = asked.filter((c) => c === 'elsewhere:0').length;
    expect(timesAsked).toBeLessThanOrEqual(9);
    await bus.publish(topicName('status'), [receipt('smsc:新しい')]);
    await eventually(() => recorded.length === 1, 2_000);
    expect(recorded[0]?.messageId).toBe('message-new');
  }, 15_000);

  it('matches a receipt to a message an earlier version submitted, whose carrier id it kept as the carrier wrote it (000F426B, not f426b)', async () => {
    const bus = createMemoryBus({ partitions: 2 });
    const state = createMemoryState();
    // Kept as written by the version before ids were compared as numbers: one in hot state, one in history only.
    await state.putCarrierIds([{ carrierId: 'spark:000F426B', messageId: 'message-hot' }]);
    const history = {
      async findMessageIdsByCarrierIds(carrierIds: readonly string[]) {
        return new Map(carrierIds.filter((c) => c === 'spark:0000F4270').map((c) => [c, 'message-history']));
      },
      latestStatuses: async () => new Map(),
    } as unknown as MessageHistory;
    const recorded: StatusChange[] = [];
    const recorder = { record: async (changes: readonly StatusChange[]) => (recorded.push(...changes), changes.map(() => true)) } as unknown as StatusRecorder;
    subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }) });
    await bus.publish(topicName('status'), [
      {
        key: 'a',
        value: encodeStatus({
          id: '',
          carrierId: 'spark:f426b',
          carrierIdAsWritten: 'spark:000F426B',
          status: 'received',
          at: 1_700_000_000_000,
          channel: 'sms',
        }),
      },
      {
        key: 'b',
        value: encodeStatus({
          id: '',
          carrierId: 'spark:f4270',
          carrierIdAsWritten: 'spark:0000F4270',
          status: 'received',
          at: 1_700_000_000_001,
          channel: 'sms',
        }),
      },
    ]);
    await eventually(() => recorded.length === 2);
    expect(recorded.map((c) => c.messageId).sort()).toEqual(['message-history', 'message-hot']);
  });

  it('still records a receipt it held, unmatched, when core crashed: the carrier was answered and will not send it again', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-held-reports-'));
    const heldFile = { path: path.join(dir, 'state', 'held-delivery-reports.jsonl'), fsync: false };
    const history = { findMessageIdsByCarrierIds: async () => new Map<string, string>() } as unknown as MessageHistory;
    const log = createLogger({ test: 'status-consumer' });
    const before: StatusChange[] = [];
    const first = createMemoryBus({ partitions: 2 });
    await startStatusConsumer({
      bus: first,
      state: createMemoryState(),
      history,
      recorder: { record: async (changes: readonly StatusChange[]) => (before.push(...changes), changes.map(() => true)) } as unknown as StatusRecorder,
      log,
      heldFile,
    });
    // The receipt overtook its submit's answer: no message has this carrier id yet.
    await first.publish(
      topicName('status'),
      [
        {
          key: 'k',
          value: encodeStatus({
            id: '',
            carrierId: 'smsc:6887f800443fe',
            status: 'received',
            at: 1_700_000_000_000,
            channel: 'sms',
            detail: 'Kua tae — 已送达 ✅',
          }),
        },
      ],
      { untilDurable: true },
    );
    expect(before).toEqual([]);

    // kill -9: nothing is closed. After the restart the submit's answer is recorded, and the held receipt with it.
    const state = createMemoryState();
    await state.putCarrierIds([{ carrierId: 'smsc:6887f800443fe', messageId: 'message-1' }]);
    const after: StatusChange[] = [];
    subscription = await startStatusConsumer({
      bus: createMemoryBus({ partitions: 2 }),
      state,
      history,
      recorder: { record: async (changes: readonly StatusChange[]) => (after.push(...changes), changes.map(() => true)) } as unknown as StatusRecorder,
      log,
      heldFile,
    });
    await eventually(() => after.length === 1, 5000);
    expect(after[0]).toMatchObject({ messageId: 'message-1', status: 'received', carrierId: 'smsc:6887f800443fe', detail: 'Kua tae — 已送达 ✅' });
    fs.rmSync(dir, { recursive: true, force: true });
  });
  it('neither holds again nor warns again, after a restart, about receipts it matched or gave up, and keeps them out of its file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-held-reports-'));
    const heldFile = { path: path.join(dir, 'state', 'held-delivery-reports.jsonl'), fsync: true };
    const history = { findMessageIdsByCarrierIds: async () => new Map<string, string>() } as unknown as MessageHistory;
    const said: { msg: string; fields?: Record<string, unknown> }[] = [];
    const log: Logger = {
      debug: () => {},
      info: (msg, fields) => said.push({ msg, fields }),
      warn: (msg, fields) => said.push({ msg, fields }),
      error: (msg, fields) => said.push({ msg, fields }),
      child: () => log,
    };
    const recorded: StatusChange[] = [];
    const recorder = { record: async (changes: readonly StatusChange[]) => (recorded.push(...changes), changes.map(() => true)) } as unknown as StatusRecorder;
    const state = createMemoryState();
    const bus = createMemoryBus({ partitions: 2 });
    const first = await startStatusConsumer({ bus, state, history, recorder, log, holdUnmatchedMs: 1000, heldFile });
    const receipt = (carrierId: string) => ({
      key: carrierId,
      value: encodeStatus({
        id: '',
        carrierId,
        status: 'received',
        at: 1_700_000_000_000,
        channel: 'sms',
        detail: 'Kua tae atu te karere ki a Mere Pōmare 📨',
      }),
    });
    // Five receipts whose submits are never recorded, and one whose submit is recorded a moment later.
    const never = Array.from({ length: 5 }, (_, i) => `smsc:ā${i}🙂`);
    await bus.publish(topicName('status'), [...never, 'smsc:matched-later'].map(receipt), { untilDurable: true });
    await state.putCarrierIds([{ carrierId: 'smsc:matched-later', messageId: 'message-1' }]);
    const dropped = () => said.filter((s) => s.msg.startsWith('dropping delivery reports'));
    await eventually(() => recorded.length === 1 && dropped().reduce((n, s) => n + Number(s.fields?.reports), 0) === 5, 5000);
    // One line for the reports given up together, naming them, not one each.
    expect(dropped().length).toBeLessThanOrEqual(2);
    expect(
      dropped()
        .flatMap((s) => s.fields?.carrierIds as string[])
        .sort(),
    ).toEqual([...never].sort());
    // One still held at the stop: the file is not rewritten empty, so what leaves the others out is in it.
    await bus.publish(topicName('status'), [receipt('smsc:still-held-ō')], { untilDurable: true });
    await eventually(() => fs.readFileSync(heldFile.path, 'utf8').includes('smsc:still-held-ō'), 5000);
    await first.close();

    said.length = 0;
    subscription = await startStatusConsumer({
      bus: createMemoryBus({ partitions: 2 }),
      state: createMemoryState(),
      history,
      recorder,
      log,
      holdUnmatchedMs: 1000,
      heldFile,
    });
    expect(said).toEqual([{ msg: 'matching delivery reports held before the restart', fields: { reports: 1 } }]);
    expect(
      fs
        .readFileSync(heldFile.path, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).carrierId),
    ).toEqual(['smsc:still-held-ō']);
    // Given up in its turn, it leaves the file as well.
    await eventually(() => dropped().some((s) => ((s.fields?.carrierIds as string[] | undefined) ?? []).includes('smsc:still-held-ō')), 5000);
    await eventually(() => fs.readFileSync(heldFile.path, 'utf8') === '', 5000);
    expect(dropped()).toEqual([
      {
        msg: 'dropping delivery reports whose carrier ids never matched a message',
        fields: { reports: 1, carrierIds: ['smsc:still-held-ō'], statuses: { received: 1 } },
      },
    ]);
    expect(recorded).toHaveLength(1);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a receipt the carrier sends again after a restart for a message history has as received already, and tells nobody', async () => {
    const bus = createMemoryBus({ partitions: 2 });
    // A restart: hot state (memory) is empty; history has the message received, and its carrier id.
    const state = createMemoryState();
    const stored = new Map([
      ['message-1', { id: 'message-1', status: 'received', statusAt: 1_700_000_000_500 }],
      ['message-2', { id: 'message-2', status: 'submitted', statusAt: 1_700_000_000_400 }],
    ]);
    const events: unknown[] = [];
    const history = {
      findMessageIdsByCarrierIds: async (carrierIds: readonly string[]) =>
        new Map(carrierIds.filter((c) => c.startsWith('smsc:')).map((c) => [c, c.replace('smsc:', 'message-')])),
      latestStatuses: async (ids: readonly string[]) =>
        new Map(ids.flatMap((id) => (stored.has(id) ? [[id, { status: stored.get(id)!.status, at: stored.get(id)!.statusAt }] as const] : []))),
      appendEvents: async (batch: readonly unknown[]) => void events.push(...batch),
    } as unknown as MessageHistory;
    const recorder = createStatusRecorder({ history, state });
    const told: StatusChange[] = [];
    recorder.onApplied((c) => told.push(c));
    subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }) });

    const receipt = (carrierId: string, at: number) => ({
      key: carrierId,
      value: encodeStatus({ id: '', carrierId, status: 'received', at, channel: 'sms', detail: 'Kua tae — 已送达 ✅' }),
    });
    await bus.publish(topicName('status'), [receipt('smsc:1', 1_700_000_009_000), receipt('smsc:2', 1_700_000_009_001)]);

    // The message still on its way takes its receipt; the one received before the restart is not received twice.
    await eventually(() => told.length === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(told.map((c) => c.messageId)).toEqual(['message-2']);
    expect((await state.getStatus('message-1'))?.status).toBe('received');
  });

  it('shows every outcome of unmatched delivery reports at zero from its start, so a dashboard has a line before the first one', async () => {
    unmatchedReports.reset();
    await consume(createMemoryBus({ partitions: 2 }), createMemoryState(), {} as MessageHistory);
    const shown = (await unmatchedReports.get()).values.map((v) => [v.labels.outcome, v.value]);
    expect(shown).toEqual(
      expect.arrayContaining([
        ['held', 0],
        ['early', 0],
        ['matched_later', 0],
        ['dropped', 0],
      ]),
    );
  });

  it("records a carrier's answer about a message hot state lost (a Redis back empty) at once, and counts it nowhere as unmatched or early", async () => {
    const unmatchedSoFar = async (): Promise<number> => (await unmatchedReports.get()).values.reduce((sum, v) => sum + v.value, 0);
    const before = await unmatchedSoFar();
    const bus = createMemoryBus({ partitions: 2 });
    // Redis came back empty: hot state knows neither the message nor its carrier id; history has it submitted.
    const state = createMemoryState();
    const history = {
      findMessageIdsByCarrierIds: async () => new Map<string, string>(),
      latestStatuses: async (ids: readonly string[]) =>
        new Map(ids.filter((id) => id === 'message-1').map((id) => [id, { status: 'submitted' as const, at: 1_700_000_000_003 }])),
      appendEvents: async () => undefined,
    } as unknown as MessageHistory;
    const told = await consume(bus, state, history);

    // The worker asked the carrier (query_sm) and reports its answer under the message id the question named.
    await bus.publish(topicName('status'), [
      {
        key: 'message-1',
        value: encodeStatus({
          id: 'message-1',
          carrierId: 'smsc:ā-1',
          status: 'failed',
          at: 1_700_000_000_050,
          channel: 'sms',
          errorCode: 'UNDELIV',
          detail: 'Kāore i tae',
        }),
      },
    ]);

    // Matched in its own batch, not held for the next sweep of held reports (half a second later).
    await eventually(() => told.length === 1, 400);
    expect(told.map((c) => [c.messageId, c.status])).toEqual([['message-1', 'failed']]);
    expect((await state.getStatus('message-1'))?.status).toBe('failed');
    await new Promise((r) => setTimeout(r, 600));
    expect(told).toHaveLength(1);
    expect(await unmatchedSoFar()).toBe(before);
  });

  it("finds the message of a receipt for a part the SMSC took of a long SMS it then refused, by the part's id kept with the rejection, and keeps it rejected", async () => {
    const bus = createMemoryBus({ partitions: 2 });
    const state = createMemoryState();
    const events: { messageId: string; status: string; carrierId: string; at: number }[] = [];
    const history = {
      appendEvents: async (batch: readonly (typeof events)[number][]) => void events.push(...batch),
      findMessageIdsByCarrierIds: async (carrierIds: readonly string[]) =>
        new Map(events.filter((e) => carrierIds.includes(e.carrierId)).map((e) => [e.carrierId, e.messageId])),
      latestStatuses: async (ids: readonly string[]) =>
        new Map(events.filter((e) => ids.includes(e.messageId) && e.carrierId === '').map((e) => [e.messageId, { status: e.status, at: e.at }])),
    } as unknown as MessageHistory;
    const recorder = createStatusRecorder({ history, state });
    const told: StatusChange[] = [];
    recorder.onApplied((c) => told.push(c));
    const lines: string[] = [];
    const log = createLogger({ test: 'status-consumer' });
    const recording: Logger = { ...log, warn: (m, f) => (lines.push(m), log.warn(m, f)), child: () => recording };
    subscription = await startStatusConsumer({ bus, state, history, recorder, log: recording, holdUnmatchedMs: 1000 });
    await state.advanceStatuses([{ id: 'message-1', status: 'sent', at: 1_700_000_000_000, channel: 'sms' }]);

    // Part 2 refused for good; parts 1 and 3 taken, named with the rejection.
    const at = 1_700_000_001_000;
    await bus.publish(topicName('status'), [
      {
        key: 'message-1',
        value: encodeStatus({
          id: 'message-1',
          status: 'rejected',
          at,
          channel: 'sms',
          partCarrierIds: ['smsc:ā1', 'smsc:ā3'],
          detail: 'part 2 of 3 refused by the carrier: ESME_RINVDSTADR',
        }),
      },
    ]);
    await eventually(() => told.length === 1);
    // The taken parts' receipts: the worker did not know their message.
    await bus.publish(
      topicName('status'),
      ['smsc:ā1', 'smsc:ā3'].map((carrierId, i) => ({
        key: carrierId,
        value: encodeStatus({ id: '', carrierId, status: 'received', at: at + 100 + i, channel: 'sms', detail: 'Kua tae — 已送达 ✅' }),
      })),
    );
    // Past the time a report is held unmatched: none was dropped, and the message is still rejected.
    await new Promise((r) => setTimeout(r, 2500));
    expect(lines.filter((l) => l.includes('dropping'))).toEqual([]);
    expect(told.map((c) => `${c.messageId} ${c.status}`)).toEqual(['message-1 rejected']);
    expect((await state.getStatus('message-1'))?.status).toBe('rejected');
  });

  it('keeps a received SMS received when its carrier reports a failure later, in hot state or after hot state forgot it, and fails a received e-mail that bounces', async () => {
    const bus = createMemoryBus({ partitions: 2 });
    const state = createMemoryState();
    // message-1 (SMS) and message-3 (e-mail) received, in hot state; message-2 (SMS) received, in history only.
    await state.advanceStatuses([
      { id: 'message-1', status: 'received', at: 1_700_000_000_500, channel: 'sms' },
      { id: 'message-3', status: 'received', at: 1_700_000_000_500, channel: 'email' },
    ]);
    await state.putCarrierIds([
      { carrierId: 'smsc:1', messageId: 'message-1' },
      { carrierId: 'relay:3', messageId: 'message-3' },
    ]);
    const history = {
      findMessageIdsByCarrierIds: async (carrierIds: readonly string[]) => new Map(carrierIds.filter((c) => c === 'smsc:2').map((c) => [c, 'message-2'])),
      latestStatuses: async (ids: readonly string[]) =>
        new Map(ids.filter((id) => id === 'message-2').map((id) => [id, { status: 'received' as const, at: 1_700_000_000_400 }])),
      appendEvents: async () => undefined,
    } as unknown as MessageHistory;
    const told = await consume(bus, state, history);

    const failure = (carrierId: string, channel: string) => ({
      key: carrierId,
      value: encodeStatus({ id: '', carrierId, status: 'failed', at: 1_700_000_009_000, channel, errorCode: '001', detail: 'Kāore i tae — 未送达 ❌' }),
    });
    await bus.publish(topicName('status'), [failure('smsc:1', 'sms'), failure('smsc:2', 'sms'), failure('relay:3', 'email')]);

    await eventually(() => told.some((c) => c.messageId === 'message-3'));
    await new Promise((r) => setTimeout(r, 300));
    expect(told.map((c) => [c.messageId, c.status])).toEqual([['message-3', 'failed']]);
    expect((await state.getStatus('message-1'))?.status).toBe('received');
    expect((await state.getStatus('message-2'))?.status).toBe('received');
  });

  it("fails nobody twice: an e-mail's bounce sent again finds its failed in history though hot state still held it received and had lost its carrier id", async () => {
    const bus = createMemoryBus({ partitions: 2 });
    const state = createMemoryState();
    // Hot state behind (a replica promoted before it had the bounce): the e-mail received, its relay id gone.
    await state.advanceStatuses([{ id: 'mail-1', status: 'received', at: 1_700_000_000_500, channel: 'email' }]);
    const history = {
      findMessageIdsByCarrierIds: async (carrierIds: readonly string[]) => new Map(carrierIds.filter((c) => c === 'relay:1').map((c) => [c, 'mail-1'])),
      latestStatuses: async (ids: readonly string[]) =>
        new Map(ids.filter((id) => id === 'mail-1').map((id) => [id, { status: 'failed' as const, at: 1_700_000_009_000 }])),
      appendEvents: async () => undefined,
    } as unknown as MessageHistory;
    const told = await consume(bus, state, history);

    // The provider sends its bounce webhook again.
    await bus.publish(topicName('status'), [
      {
        key: 'relay:1',
        value: encodeStatus({
          id: '',
          carrierId: 'relay:1',
          status: 'failed',
          at: 1_700_000_009_000,
          channel: 'email',
          errorCode: '5.1.1',
          detail: 'Kāore te pouaka — 用户不存在 📭',
        }),
      },
    ]);

    await eventually(async () => (await state.getStatus('mail-1'))?.status === 'failed');
    await new Promise((r) => setTimeout(r, 300));
    expect(told).toEqual([]);
  });

  it("keeps a long SMS received when a part's failure, or a part's delivered again, comes after hot state let the message go (its final minute passed) but still knew the part's carrier id", async () => {
    let t = 1_700_000_000_000;
    const bus = createMemoryBus({ partitions: 2 });
    const state = createMemoryState({ finalTtlMs: 60_000, now: () => t });
    const history = {
      findMessageIdsByCarrierIds: async () => new Map<string, string>(),
      latestStatuses: async (ids: readonly string[]) =>
        new Map(ids.filter((id) => id === 'long-1').map((id) => [id, { status: 'received' as const, at: 1_700_000_000_300 }])),
      appendEvents: async () => undefined,
    } as unknown as MessageHistory;
    const told = await consume(bus, state, history);
    // A message in two parts, submitted and delivered whole: `received`, told.
    await state.advanceStatuses(
      (['accepted', 'queued', 'sent', 'submitted'] as const).map((status, i) => ({ id: 'long-1', status, at: t + i, channel: 'sms' })),
    );
    await state.putCarrierIds([
      { carrierId: 'smsc:p1', messageId: 'long-1' },
      { carrierId: 'smsc:p2', messageId: 'long-1' },
    ]);
    const receipt = (carrierId: string, status: 'received' | 'failed', detail: string) => ({
      key: carrierId,
      value: encodeStatus({ id: '', carrierId, status, at: t, channel: 'sms', detail }),
    });
    await bus.publish(topicName('status'), [receipt('smsc:p1', 'received', 'Kua tae — 1/2'), receipt('smsc:p2', 'received', 'Kua tae — 2/2 ✅')]);
    await eventually(() => told.length === 1);
    expect(told.map((c) => c.status)).toEqual(['received']);

    // A minute and more later the carrier reports on part 1 again: a conflicting failure, and part 2's delivered again.
    t += 61_000;
    await bus.publish(topicName('status'), [receipt('smsc:p1', 'failed', 'UNDELIV — 未送达'), receipt('smsc:p2', 'received', 'Kua tae anō')]);
    await new Promise((r) => setTimeout(r, 500));
    expect(told.map((c) => c.status)).toEqual(['received']);
    expect((await state.getStatus('long-1'))?.status).not.toBe('failed');
  });

  describe("a receipt that overtakes its submit's own report", () => {
    /**
     * A message the worker handed to the carrier: `sent`, its carrier id stored (unless `carrierIdStored` is false),
     * its `submitted` still on the way.
     */
    const handedOver = async (reported: 'sent' | 'queued' = 'sent', carrierIdStored = true) => {
      const bus = createMemoryBus({ partitions: 4 });
      const state = createMemoryState();
      await state.advanceStatuses(
        [
          { id: 'message-1', status: 'accepted' as const, at: 1_700_000_000_000 },
          { id: 'message-1', status: 'queued' as const, at: 1_700_000_000_001 },
          { id: 'message-1', status: 'sent' as const, at: 1_700_000_000_002 },
        ].slice(0, reported === 'sent' ? 3 : 2),
      );
      if (carrierIdStored) await state.putCarrierIds([{ carrierId: 'wamid.HBgLNjQyMTAwMDAwMDEVAgARGBI', messageId: 'message-1' }]);
      const history = {
        findMessageIdsByCarrierIds: async () => new Map<string, string>(),
        latestStatuses: async () => new Map(),
        appendEvents: async () => undefined,
      } as unknown as MessageHistory;
      const recorder = createStatusRecorder({ history, state });
      const told: string[] = [];
      recorder.onApplied((c) => told.push(c.status));
      return { bus, state, history, recorder, told };
    };
    // A carrier's webhook goes on the status topic keyed by its carrier id, the worker's report by the message id:
    // another partition, and on a multi-process deployment another process.
    const webhook = (status: 'received' | 'read', at: number) => ({
      key: 'wamid.HBgLNjQyMTAwMDAwMDEVAgARGBI',
      value: encodeStatus({ id: '', carrierId: 'wamid.HBgLNjQyMTAwMDAwMDEVAgARGBI', status, at, channel: 'whatsapp', detail: 'Kua tae 🎉' }),
    });
    const submitted = {
      key: 'message-1',
      value: encodeStatus({ id: 'message-1', carrierId: 'wamid.HBgLNjQyMTAwMDAwMDEVAgARGBI', status: 'submitted', at: 1_700_000_000_003, channel: 'whatsapp' }),
    };

    it('matches a receipt that has waited seconds for its unknown carrier id as soon as the submit naming that id is recorded, not at its next look', async () => {
      // No carrier id yet anywhere: the worker's submitted, which names it, is late (a busy core).
      const { bus, state, history, recorder, told } = await handedOver('sent', false);
      subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }) });

      await bus.publish(topicName('status'), [webhook('received', 1_700_000_000_050)]);
      // Looked for four times half a second apart, then a second later, then two: its next look is seconds away.
      await new Promise((r) => setTimeout(r, 3600));
      expect(told).toEqual([]);
      // As the worker does: the carrier id stored, then its submitted published.
      await state.putCarrierIds([{ carrierId: 'wamid.HBgLNjQyMTAwMDAwMDEVAgARGBI', messageId: 'message-1' }]);
      await bus.publish(topicName('status'), [submitted]);
      await eventually(() => told.length === 2, 1000);
      expect(told).toEqual(['submitted', 'received']);
    });

    it("waits for the submit's report, so the client is told submitted and then received", async () => {
      const { bus, state, history, recorder, told } = await handedOver();
      subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }) });

      await bus.publish(topicName('status'), [webhook('received', 1_700_000_000_050)]);
      await new Promise((r) => setTimeout(r, 200));
      await bus.publish(topicName('status'), [submitted]);

      await eventually(() => told.length === 2, 5000);
      expect(told).toEqual(['submitted', 'received']);
      expect((await state.getStatus('message-1'))?.status).toBe('received');
    });

    it("applies it once the submit's report has had time enough to come and has not (its worker died), told after the submitted it proves", async () => {
      const { bus, state, history, recorder, told } = await handedOver();
      subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }), holdEarlyMs: 600 });

      await bus.publish(topicName('status'), [webhook('read', 1_700_000_000_050)]);

      await eventually(() => told.length === 3, 5000);
      expect(told).toEqual(['submitted', 'received', 'read']);
      // The submit's own report, should it come after all, is a duplicate: told to nobody.
      await bus.publish(topicName('status'), [submitted]);
      await new Promise((r) => setTimeout(r, 300));
      expect(told).toEqual(['submitted', 'received', 'read']);
    });

    it('tells sent too, before the submitted it proves, when the worker died holding both its reports', async () => {
      const { bus, state, history, recorder, told } = await handedOver('queued');
      subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }), holdEarlyMs: 600 });

      await bus.publish(topicName('status'), [webhook('received', 1_700_000_000_050)]);

      await eventually(() => told.length === 3, 5000);
      expect(told).toEqual(['sent', 'submitted', 'received']);
    });

    it('tells sent and submitted once: a receipt matched only after its wait, for a message whose status hot state lost (a Redis master back empty), finds them in history first', async () => {
      const bus = createMemoryBus({ partitions: 4 });
      // Hot state lost the message's status (its master came back empty); history has it submitted, its sent and
      // submitted told. The carrier id is stored again only after the receipt's wait for its submit's report (its
      // worker retrying the write while the cluster failed over): the receipt is matched late, by hot state.
      const state = createMemoryState();
      const history = {
        findMessageIdsByCarrierIds: async () => new Map<string, string>(),
        latestStatuses: async (ids: readonly string[]) =>
          new Map(ids.filter((id) => id === 'message-1').map((id) => [id, { status: 'submitted' as const, at: 1_700_000_000_003 }])),
        appendEvents: async () => undefined,
      } as unknown as MessageHistory;
      const recorder = createStatusRecorder({ history, state });
      const told: string[] = [];
      recorder.onApplied((c) => told.push(c.status));
      subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }), holdEarlyMs: 300 });

      await bus.publish(topicName('status'), [
        {
          key: 'smsc:ā-1',
          value: encodeStatus({ id: '', carrierId: 'smsc:ā-1', status: 'received', at: 1_700_000_000_050, channel: 'sms', detail: 'Kua tae' }),
        },
      ]);
      await new Promise((r) => setTimeout(r, 700));
      await state.putCarrierIds([{ carrierId: 'smsc:ā-1', messageId: 'message-1' }]);

      await eventually(() => told.length > 0, 5000);
      await new Promise((r) => setTimeout(r, 600));
      expect(told).toEqual(['received']);
    });

    it("tells received before a read whose delivered report never came or comes after it (WhatsApp's webhooks keep no order), and the late delivered to nobody", async () => {
      const { bus, state, history, recorder, told } = await handedOver();
      subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }) });
      await bus.publish(topicName('status'), [submitted]);
      await eventually(() => told.length === 1, 5000);

      await bus.publish(topicName('status'), [webhook('read', 1_700_000_000_050)]);
      await eventually(() => told.length === 3, 5000);
      await bus.publish(topicName('status'), [webhook('received', 1_700_000_000_040)]);
      await new Promise((r) => setTimeout(r, 300));
      expect(told).toEqual(['submitted', 'received', 'read']);
      expect((await state.getStatus('message-1'))?.status).toBe('read');
    });

    it("tells submitted, received and read when the read and then its delivered both come before the submit's report", async () => {
      const { bus, state, history, recorder, told } = await handedOver();
      subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }) });
      await bus.publish(topicName('status'), [webhook('read', 1_700_000_000_050)]);
      await new Promise((r) => setTimeout(r, 100));
      await bus.publish(topicName('status'), [webhook('received', 1_700_000_000_040)]);
      await new Promise((r) => setTimeout(r, 200));
      await bus.publish(topicName('status'), [submitted]);
      await eventually(() => told.length === 3, 5000);
      await new Promise((r) => setTimeout(r, 300));
      expect(told).toEqual(['submitted', 'received', 'read']);
    });

    it('tells received once: a read after its delivered report adds nothing but the read', async () => {
      const { bus, state, history, recorder, told } = await handedOver();
      subscription = await startStatusConsumer({ bus, state, history, recorder, log: createLogger({ test: 'status-consumer' }) });
      await bus.publish(topicName('status'), [submitted]);
      await eventually(() => told.length === 1, 5000);
      await bus.publish(topicName('status'), [webhook('received', 1_700_000_000_040)]);
      await eventually(() => told.length === 2, 5000);

      // The received it proves is a duplicate, refused without a look at hot state (one a WhatsApp read otherwise).
      let looks = 0;
      const getStatus = state.getStatus.bind(state);
      state.getStatus = async (id) => {
        looks += 1;
        return getStatus(id);
      };
      await bus.publish(topicName('status'), [webhook('read', 1_700_000_000_050)]);
      await eventually(() => told.length === 3, 5000);
      await new Promise((r) => setTimeout(r, 200));
      expect(told).toEqual(['submitted', 'received', 'read']);
      expect(looks).toBe(0);
    });
  });
});
