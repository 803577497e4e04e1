import { describe, expect, it } from 'vitest';
import { createMemoryBus } from '../adapters/memory-bus';
import { createMemoryState } from '../adapters/memory-state';
import { topicName } from '../ports/bus';
import { decodeJob, type OutboundJob, type StatusUpdate } from '../ports/bus-payloads';
import type { MessageHistory, StoredMessage } from '../ports/message-history';
import { createLogger } from '../../lib/log';
import { eventually } from '../../test/support/eventually';
import { imAttemptId, newImMessageId } from '../im/im-ids';
import { createDeferredSends } from './deferred-sends';
import { createMessageIntake } from './message-intake';
import { createRecentMessages } from './recent-messages';
import type { StatusChange, StatusRecorder } from './status-recorder';

const log = createLogger({ test: 'deferred-sends' });

const stored = (id: string, over: Partial<StoredMessage> = {}): StoredMessage => ({
  id,
  numericId: 42,
  applicationId: 'acme',
  channel: 'sms',
  direction: 'MT',
  destination: '+64211234590',
  source: 'KORERO',
  content: 'Kia ora — ka tae mai te pahi ā te 3 karaka 🚌',
  reference: 'ref-ā',
  messageClass: '',
  mask: '',
  smsClass: 1,
  scheduledAt: 0,
  integrationId: '',
  via: 'sms_v2',
  segments: 1,
  acceptedAt: Date.now() - 120_000,
  replyTo: '',
  status: 'sent',
  statusAt: Date.now() - 60_000,
  ...over,
});

const deferral = (id: string, retryAt: number, deferredSince: number): StatusUpdate => ({
  id,
  status: 'queued',
  at: Date.now(),
  channel: 'sms',
  errorCode: 'unavailable',
  detail: 'ESME_RTHROTTLED',
  retryAt,
  deferredSince,
});

async function deferredOn(messages: StoredMessage[]) {
  const bus = createMemoryBus({ partitions: 1 });
  const state = createMemoryState();
  const history = {
    findMessages: async (ids: readonly string[]) => messages.filter((m) => ids.includes(m.id)).map(({ status: _s, statusAt: _a, ...m }) => m),
  } as unknown as MessageHistory;
  const recorded: StatusChange[] = [];
  const recorder = {
    record: async (changes: readonly StatusChange[]) => (recorded.push(...changes), changes.map(() => false)),
    onApplied: () => undefined,
    announce: () => undefined,
    drain: async () => undefined,
  } as unknown as StatusRecorder;
  const intake = createMessageIntake({ history, state, bus, recorder, recent: createRecentMessages(), numericIds: () => 1 });
  const jobs: { job: OutboundJob; at: number }[] = [];
  await bus.subscribe(topicName('sms'), async (records) => void jobs.push(...records.map((r) => ({ job: decodeJob(r.value), at: Date.now() }))), {
    group: 'test',
  });
  const retried: [string, number, number][] = [];
  const deferred = createDeferredSends({
    history,
    state,
    intake,
    attempts: async () => ({ retryAttempt: (id, retryAt, since) => void retried.push([id, retryAt, since]) }),
    log,
  });
  return { state, deferred, jobs, retried, recorded, stop: () => intake.drain().then(() => bus.close()) };
}

describe('a message its carrier keeps refusing for now, given back by its worker', () => {
  it('is handed to its channel again at the time the worker asked, whole and marked as deferred since its first refusal', async () => {
    const message = stored('m-ā-1');
    const { deferred, jobs, stop } = await deferredOn([message]);
    const since = Date.now() - 90_000;
    const retryAt = Date.now() + 1_000;
    await deferred([deferral(message.id, retryAt, since)]);
    expect(jobs).toEqual([]);
    await eventually(() => jobs.length === 1, 5_000);
    expect(jobs[0]!.at).toBeGreaterThanOrEqual(retryAt - 5);
    expect(jobs[0]!.job).toMatchObject({
      id: message.id,
      destination: message.destination,
      source: 'KORERO',
      content: message.content,
      deferredSince: since,
    });
    await stop();
  });

  it('is screened again at its time, even when core reads the deferral after that time: a handset that opted out meanwhile gets nothing', async () => {
    const message = stored('m-ā-3', { destination: '+64211234591' });
    const { state, deferred, jobs, recorded, stop } = await deferredOn([message]);
    await state.setOptOuts([{ applicationId: 'acme', handset: '+64211234591', optedOut: true }]);
    // The status topic lagged: the time to try again passed before core read it.
    await deferred([deferral(message.id, Date.now() - 5_000, Date.now() - 65_000)]);
    await eventually(() => recorded.some((c) => c.messageId === message.id && c.status === 'blocked'), 5_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(jobs).toEqual([]);
    await stop();
  });

  it('is left alone when a copy of it reached the carrier meanwhile', async () => {
    const message = stored('m-ā-2');
    const { state, deferred, jobs, stop } = await deferredOn([message]);
    await state.advanceStatuses([{ id: message.id, status: 'submitted', at: Date.now() }]);
    await deferred([deferral(message.id, Date.now() + 100, Date.now())]);
    await new Promise((r) => setTimeout(r, 1_300));
    expect(jobs).toEqual([]);
    await stop();
  });

  it('waits with the Intelligent Messaging orchestrator when it is an attempt (its media and timeout are known there)', async () => {
    const attempt = imAttemptId(newImMessageId(), 0);
    const { deferred, jobs, retried, stop } = await deferredOn([stored(attempt, { channel: 'email', via: 'im_attempt', destination: 'mere@kōrero.example' })]);
    await deferred([deferral(attempt, 1_700_000_060_000, 1_700_000_000_000)]);
    expect(retried).toEqual([[attempt, 1_700_000_060_000, 1_700_000_000_000]]);
    await new Promise((r) => setTimeout(r, 300));
    expect(jobs).toEqual([]);
    await stop();
  });
});
