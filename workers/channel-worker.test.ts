import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../core/adapters/memory-bus';
import { createMemoryState } from '../core/adapters/memory-state';
import { decodeStatus, type OutboundJob, type StatusUpdate } from '../core/ports/bus-payloads';
import type { HotState } from '../core/ports/state';
import type { MessageStatus } from '../core/domain/message-status';
import { eventually } from '../test/support/eventually';
import { heldBackError, type Carrier, type CarrierReport } from './carrier';
import { startChannelWorker, type ChannelWorkerOptions } from './channel-worker';
import { quietLog, smppTestKit } from './simulators/smpp-test-kit';
import { createSmppCarrier } from './sms/smpp-carrier';
import { createRoutedCarrier } from './sms/routed-carrier';
import { createRouteMatcher } from '../core/domain/route-matcher';
import { carrierConfig } from './sms/carrier-config-test-kit';
import { CommandStatus } from './carriers/smpp/command-status';
import { createRedisBus } from '../core/adapters/redis-bus';
import { HermodError } from '../lib/errors';
import { carrierQueries, carrierSendDuration, carrierSends } from '../lib/metrics';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from '../test/support/redis-keys';
import { type Bus, type BusRecord, type PublishOptions, topicName } from '../core/ports/bus';
import { encodeJob } from '../core/ports/bus-payloads';
import { imJob } from './carriers/http/http-carrier-test-kit';
import { channelPoolTestKit } from './channel-pool-test-kit';
import { campaignMessageId } from '../core/campaigns/campaign-message-ids';
import { createWhatsAppSimulator } from './simulators/whatsapp-simulator';
import { startWabWorkerPool } from './wab/wab-worker-pool';

const kit = channelPoolTestKit();
const prefixes = new Set<string>();
afterAll(() => deleteRedisKeys(...prefixes));

/** An SMPP carrier `spark` on the simulator at `port`, routed as the SMS worker pool routes every message (sms-worker-pool.ts). */
function routedToSpark(port: number) {
  const config = carrierConfig('spark', port);
  return createRoutedCarrier({
    carriers: [createSmppCarrier(config, quietLog)],
    configs: [config],
    decide: createRouteMatcher({ rules: [], defaultTarget: { kind: 'carrier', carriers: ['spark'] }, ported: new Map() }),
    state: createMemoryState(),
    log: quietLog,
  });
}

describe('a channel worker on Redis Streams during a rolling upgrade', () => {
  it('sends a job an older build left without a version, and sets a malformed record aside without holding up the jobs behind it', async () => {
    const sim = await kit.simulator((webhookUrl) => createWhatsAppSimulator({ token: 't', appSecret: 's', webhookUrl }));
    const config = { baseUrl: `http://localhost:${sim.port}`, token: 't', sender: '100000000000001', webhookSecret: 's', apiVersion: 'v21.0' };
    const prefix = randomPrefix();
    prefixes.add(prefix);
    // One partition: the malformed record sits between the two jobs in the same stream.
    const { bus, statusesOnce } = await kit.pool('wab', (deps) => startWabWorkerPool({ config, ...deps }), {
      bus: () => createRedisBus({ redis: REDIS_URL, prefix, partitions: 1 }),
    });
    const before = imJob('wab', '+64211234561', { type: 'text' }, 'Kia ora, e hoa mā — tēnā koe 👋🏽');
    const after = imJob('wab', '+64211234562', { type: 'text' }, '你好世界 🎉');
    await bus.publish(topicName('wab'), [
      // What the build before versions wrote: the job's JSON, no `v`.
      { key: before.id, value: Buffer.from(JSON.stringify(before)) },
      { key: 'junk', value: Buffer.from('{"id": "half a job", "channel": ') },
      { key: 'no-destination', value: Buffer.from(JSON.stringify({ ...after, id: 'no-destination', destination: undefined })) },
      { key: after.id, value: encodeJob(after) },
    ]);
    expect((await statusesOnce(before.id, 'submitted', 15_000)).map((u) => u.status)).toEqual(['sent', 'submitted']);
    expect((await statusesOnce(after.id, 'submitted', 15_000)).map((u) => u.status)).toEqual(['sent', 'submitted']);
    // Jobs of one batch are sent side by side: either may reach the provider first.
    expect(sim.received.map((m) => m.text?.body).sort()).toEqual(['Kia ora, e hoa mā — tēnā koe 👋🏽', '你好世界 🎉'].sort());
  });
});

describe('a channel worker after a crash between the submit and its report', () => {
  it('reports submitted for a redelivered job the carrier already took, without sending it again', async () => {
    const sim = await kit.simulator((webhookUrl) => createWhatsAppSimulator({ token: 't', appSecret: 's', webhookUrl }));
    const config = { baseUrl: `http://localhost:${sim.port}`, token: 't', sender: '100000000000001', webhookSecret: 's', apiVersion: 'v21.0' };
    const pool = await kit.pool('wab', (deps) => startWabWorkerPool({ config, ...deps }));
    const job = imJob('wab', '+64211234563', { type: 'text' }, 'Kia ora anō — 再见 👋🏽');
    // What the worker that died left: the carrier's id stored (the carrier took it), the status still queued.
    await pool.state.advanceStatuses([{ id: job.id, status: 'queued', at: Date.now() }]);
    await pool.state.putCarrierIds([{ carrierId: 'wamid.earlier-try', messageId: job.id }]);
    await pool.publish([job]);
    expect((await pool.statusesOnce(job.id, 'submitted')).map((u) => u.status)).toEqual(['submitted']);
    expect(sim.received).toHaveLength(0);
  });
});

describe('a channel worker whose bus refuses its status reports for a while', () => {
  it('reports sent and submitted once the bus takes them again, sends the message once, and does not crash', async () => {
    const sim = await kit.simulator((webhookUrl) => createWhatsAppSimulator({ token: 't', appSecret: 's', webhookUrl }));
    const config = { baseUrl: `http://localhost:${sim.port}`, token: 't', sender: '100000000000001', webhookSecret: 's', apiVersion: 'v21.0' };
    let brokerDownUntil = Date.now() + 1500;
    const refused: string[] = [];
    const pool = await kit.pool('wab', (deps) => startWabWorkerPool({ config, ...deps }), {
      bus: () => {
        const inner = createMemoryBus();
        return {
          ...inner,
          publish: (topic, records, options) => {
            if (topic === topicName('status') && Date.now() < brokerDownUntil) {
              refused.push(topic);
              return Promise.reject(new HermodError('unavailable', 'Kafka publishing to hermod.status.v1 failed: broker unreachable', { retryable: true }));
            }
            return inner.publish(topic, records, options);
          },
        };
      },
    });
    const job = imJob('wab', '+64211234564', { type: 'text' }, 'Kia ora — 你好 👋🏽');
    await pool.publish([job]);
    expect((await pool.statusesOnce(job.id, 'submitted', 15_000)).map((u) => u.status)).toEqual(['sent', 'submitted']);
    expect(refused.length).toBeGreaterThan(0);
    expect(sim.received).toHaveLength(1);
    brokerDownUntil = 0;
  });
});

/**
 * A worker on a bus that answers the publish holding `slowStatus` 300 ms late
 * (a leader moving, a slow disk) and the others at once; the statuses as core
 * reads them off the status topic.
 */
async function workerOnBusSlowToTake(slowStatus: MessageStatus, carrier: Carrier) {
  const inner = createMemoryBus();
  const bus = {
    ...inner,
    publish: async (topic: string, records: readonly BusRecord[], options?: PublishOptions) => {
      if (topic === topicName('status') && records.some((r) => decodeStatus(r.value).status === slowStatus)) await new Promise((r) => setTimeout(r, 300));
      return inner.publish(topic, records, options);
    },
  };
  const statuses: StatusUpdate[] = [];
  await inner.subscribe(topicName('status'), async (records) => void statuses.push(...records.map((r) => decodeStatus(r.value))), { group: 'test' });
  const worker = await startChannelWorker({ channel: 'sms', bus, state: createMemoryState(), carrier, log: quietLog });
  kit.defer(async () => {
    await worker.stop();
    await inner.close();
  });
  /** Sends one job and resolves with its statuses once `count` have come. */
  return async (text: string, count: number): Promise<MessageStatus[]> => {
    const job = imJob('sms', '+64211234567', { type: 'text' }, text);
    await bus.publish(topicName('sms'), [{ key: job.id, value: encodeJob(job) }]);
    await eventually(() => (statuses.filter((u) => u.id === job.id).length === count ? true : undefined), 10_000);
    return statuses.filter((u) => u.id === job.id).map((u) => u.status);
  };
}

const carrierParts = { ready: async () => undefined, onInbound: () => undefined, close: async () => undefined };

/** An SMS worker sending through `carrier` on an in-process bus and state; the statuses as core reads them off the status topic. */
async function workerWith(carrier: Carrier, log = quietLog, options: Partial<ChannelWorkerOptions> = {}) {
  const bus = createMemoryBus();
  const statuses: StatusUpdate[] = [];
  await bus.subscribe(topicName('status'), async (records) => void statuses.push(...records.map((r) => decodeStatus(r.value))), { group: 'test' });
  const worker = await startChannelWorker({ channel: 'sms', bus, state: createMemoryState(), carrier, log, ...options });
  kit.defer(async () => {
    await worker.stop();
    await bus.close();
  });
  return { bus, statuses, worker };
}

describe('a channel worker whose bus is slow to take a status', () => {
  it('reports sent before submitted even when the publish carrying sent is slower than the next one', async () => {
    // As an SMSC: the submit is written (`sent`) at once, and answered (`submitted`) a little later.
    const send = await workerOnBusSlowToTake('sent', {
      ...carrierParts,
      name: 'written-then-answered',
      async send(job, written) {
        written?.();
        await new Promise((r) => setTimeout(r, 30));
        return { carrierIds: [`c-${job.id}`] };
      },
      onReport: () => undefined,
    });
    expect(await send('Tēnā koe — 你好 👋🏽', 2)).toEqual(['sent', 'submitted']);
  });

  it('reports a delivery receipt after the submitted it follows, even when the receipt comes while submitted is still on its way', async () => {
    // As an SMSC with a fast handset: the receipt follows the submit's answer within a few milliseconds.
    let report: ((r: CarrierReport) => void | Promise<void>) | undefined;
    const send = await workerOnBusSlowToTake('submitted', {
      ...carrierParts,
      name: 'answered-then-delivered',
      async send(job) {
        const carrierId = `c-${job.id}`;
        setTimeout(() => void report?.({ carrierId, status: 'received', at: Date.now(), errorCode: '' }), 20);
        return { carrierIds: [carrierId] };
      },
      onReport: (listener) => {
        report = listener;
      },
    });
    expect(await send('Kia ora, e hoa mā 👋🏽', 3)).toEqual(['sent', 'submitted', 'received']);
  });
});

describe('a channel worker whose carrier reports delivery the moment it accepts', () => {
  it('names the message in a receipt that comes before the carrier ids are stored, for every message of a batch', async () => {
    // As a carrier whose acceptance is final (an SMTP server that is the recipient's own): the report follows at once.
    let report: ((r: CarrierReport) => void | Promise<void>) | undefined;
    const carrier: Carrier = {
      ...carrierParts,
      name: 'accepted-and-delivered',
      async send(job) {
        const carrierId = `c-${job.id}`;
        setImmediate(() => void report?.({ carrierId, status: 'received', at: Date.now(), errorCode: '' }));
        return { carrierIds: [carrierId] };
      },
      onReport: (listener) => {
        report = listener;
      },
    };
    const { bus, statuses } = await workerWith(carrier);
    const jobs = ['Kia ora 👋🏽', 'Tēnā koe', '你好', 'مرحبا'].map((text, i) => imJob('sms', `+6421123456${i}`, { type: 'text' }, text));
    await bus.publish(
      topicName('sms'),
      jobs.map((job) => ({ key: job.id, value: encodeJob(job) })),
    );
    await eventually(() => (statuses.filter((u) => u.status === 'received').length === jobs.length ? true : undefined), 10_000);
    expect(
      statuses
        .filter((u) => u.status === 'received')
        .map((u) => u.id)
        .sort(),
    ).toEqual(jobs.map((j) => j.id).sort());
  });
});

describe('a channel worker handed a job that names carrier ids (receipts that may have been lost with a Redis bus)', () => {
  /** A carrier that knows `outcomes` by carrier id and counts sends and questions; `unanswered` questions fail first. */
  function askableCarrier(outcomes: Record<string, CarrierReport['status']>, unanswered = 0) {
    const asked: string[][] = [];
    let sends = 0;
    const carrier: Carrier = {
      ...carrierParts,
      name: 'askable',
      async send(job) {
        sends++;
        return { carrierIds: [`c-${job.id}`] };
      },
      async query(_job, carrierIds) {
        asked.push([...carrierIds]);
        if (unanswered-- > 0) throw new HermodError('timeout', 'no query_sm_resp', { retryable: true });
        return carrierIds.flatMap((carrierId) =>
          outcomes[carrierId] ? [{ carrierId, status: outcomes[carrierId]!, at: 1_700_000_000_000, errorCode: '', detail: 'found by query_sm' }] : [],
        );
      },
      onReport: () => undefined,
    };
    return { carrier, asked, sends: () => sends };
  }

  const queried = async (outcome: string): Promise<number> =>
    (await carrierQueries.get()).values.find((v) => v.labels.channel === 'sms' && v.labels.outcome === outcome)?.value ?? 0;

  it('asks the carrier instead of sending, and reports each final outcome it finds as the receipt would have been', async () => {
    const before = { final: await queried('final'), pending: await queried('pending') };
    const { carrier, asked, sends } = askableCarrier({ 'smsc:0a01': 'received', 'smsc:0b01': 'failed' });
    const { bus, statuses } = await workerWith(carrier);
    const long = { ...imJob('sms', '+64211234570', { type: 'text' }, 'Tēnā koutou — '.repeat(20)), carrierIds: ['smsc:0a01', 'smsc:0a02'] };
    const failed = { ...imJob('sms', '+64211234571', { type: 'text' }, '你好 👋🏽'), carrierIds: ['smsc:0b01'] };
    // Still on its way at the carrier: its receipt will come.
    const enroute = { ...imJob('sms', '+64211234572', { type: 'text' }, 'Kei te haere'), carrierIds: ['smsc:0c01'] };
    await bus.publish(
      topicName('sms'),
      [long, failed, enroute].map((job) => ({ key: job.destination, value: encodeJob(job) })),
    );
    await eventually(async () => ((await bus.lag(topicName('sms'), 'sms-workers')) === 0 ? true : undefined), 5_000);
    await eventually(() => (statuses.length === 2 ? true : undefined), 5_000);
    expect(statuses.map((u) => [u.id, u.status, u.carrierId, u.detail]).sort()).toEqual(
      [
        [long.id, 'received', 'smsc:0a01', 'found by query_sm'],
        [failed.id, 'failed', 'smsc:0b01', 'found by query_sm'],
      ].sort(),
    );
    expect(asked.sort()).toEqual([['smsc:0a01', 'smsc:0a02'], ['smsc:0b01'], ['smsc:0c01']].sort());
    expect(sends()).toBe(0);
    // What an SRE sees: two found final, one still on its way.
    expect((await queried('final')) - before.final).toBe(2);
    expect((await queried('pending')) - before.pending).toBe(1);
  });

  it('asks again when the carrier cannot answer now, and sends a job of the same batch once', async () => {
    // Every try of the first hand-out unanswered: the batch fails and is handed out again.
    const { carrier, asked, sends } = askableCarrier({ 'smsc:0d01': 'received' }, 3);
    const { bus, statuses } = await workerWith(carrier, quietLog, { maxAttempts: 3, retryBaseMs: 5, retryMaxMs: 5 });
    const question = { ...imJob('sms', '+64211234573', { type: 'text' }, 'Kua tae? 📬'), carrierIds: ['smsc:0d01'] };
    const send = imJob('sms', '+64211234574', { type: 'text' }, 'He karere hou — 新消息');
    // One key: one partition, one batch.
    await bus.publish(
      topicName('sms'),
      [question, send].map((job) => ({ key: 'same', value: encodeJob(job) })),
    );
    await eventually(() => (statuses.some((u) => u.id === question.id && u.status === 'received') ? true : undefined), 10_000);
    await eventually(() => (statuses.some((u) => u.id === send.id && u.status === 'submitted') ? true : undefined), 10_000);
    expect(asked).toEqual([['smsc:0d01'], ['smsc:0d01'], ['smsc:0d01'], ['smsc:0d01']]);
    expect(sends()).toBe(1);
  });

  it('sends the jobs of a batch while a question of the same batch still waits for its carrier, and settles both before the batch is acknowledged', async () => {
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const carrier: Carrier = {
      ...carrierParts,
      name: 'slow-to-answer',
      send: async (job) => ({ carrierIds: [`c-${job.id}`] }),
      async query(_job, carrierIds) {
        // An SMSC slow on query_sm (each question waits its turn in the window).
        await answered;
        return carrierIds.map((carrierId) => ({ carrierId, status: 'received' as const, at: 1_700_000_000_000, errorCode: '', detail: 'found by query_sm' }));
      },
      onReport: () => undefined,
    };
    const { bus, statuses } = await workerWith(carrier);
    const question = { ...imJob('sms', '+64211234579', { type: 'text' }, 'Kua tae? 📬'), carrierIds: ['smsc:1001'] };
    const send = imJob('sms', '+64211234580', { type: 'text' }, 'He karere hou — 新消息');
    // One key: one partition, one batch.
    await bus.publish(
      topicName('sms'),
      [question, send].map((job) => ({ key: 'same', value: encodeJob(job) })),
    );
    await eventually(() => (statuses.some((u) => u.id === send.id && u.status === 'submitted') ? true : undefined), 5_000);
    expect(statuses.filter((u) => u.id === question.id)).toEqual([]);
    expect(await bus.lag(topicName('sms'), 'sms-workers')).toBe(2);
    answer();
    await eventually(async () => ((await bus.lag(topicName('sms'), 'sms-workers')) === 0 ? true : undefined), 5_000);
    expect(statuses.filter((u) => u.id === question.id).map((u) => u.status)).toEqual(['received']);
  });

  it('hands a batch whose sends failed out again only once its question has settled, so a question is never asked twice at once', async () => {
    let asking = 0;
    let mostAtOnce = 0;
    let asked = 0;
    let sends = 0;
    const carrier: Carrier = {
      ...carrierParts,
      name: 'slow-to-answer',
      async send(job) {
        sends++;
        return { carrierIds: [`c-${job.id}`] };
      },
      async query() {
        asked++;
        mostAtOnce = Math.max(mostAtOnce, ++asking);
        await new Promise((r) => setTimeout(r, 200));
        asking--;
        return [];
      },
      onReport: () => undefined,
    };
    // Hot state out of reach for the first look at the batch's sends: the sends fail the batch.
    const state = createMemoryState();
    let unreachable = 1;
    const wereSubmitted = state.wereSubmitted.bind(state);
    state.wereSubmitted = (ids) =>
      unreachable-- > 0 ? Promise.reject(new HermodError('unavailable', 'hot state out of reach', { retryable: true })) : wereSubmitted(ids);
    const { bus, statuses } = await workerWith(carrier, quietLog, { state });
    const question = { ...imJob('sms', '+64211234581', { type: 'text' }, 'Kua tae? 📬'), carrierIds: ['smsc:1101'] };
    const send = imJob('sms', '+64211234582', { type: 'text' }, 'He karere hou');
    await bus.publish(
      topicName('sms'),
      [question, send].map((job) => ({ key: 'same', value: encodeJob(job) })),
    );
    await eventually(async () => ((await bus.lag(topicName('sms'), 'sms-workers')) === 0 ? true : undefined), 5_000);
    expect(asked).toBe(2);
    expect(mostAtOnce).toBe(1);
    expect(sends).toBe(1);
    expect(statuses.filter((u) => u.id === send.id && u.status === 'submitted')).toHaveLength(1);
  });

  it('takes a question off the bus as unaskable after its fifth hand-out when the carrier never answers it, so its partition moves on', async () => {
    const before = await queried('unaskable');
    const warnings: string[] = [];
    const log = { ...quietLog, warn: (msg: string) => void warnings.push(msg), child: () => log } as typeof quietLog;
    // An SMSC that times out every query_sm: each try of each hand-out unanswered.
    const { carrier, asked, sends } = askableCarrier({}, Number.POSITIVE_INFINITY);
    const { bus, statuses } = await workerWith(carrier, log, { maxAttempts: 2, retryBaseMs: 5, retryMaxMs: 5 });
    const question = { ...imJob('sms', '+64211234576', { type: 'text' }, 'Kua tae? 📬'), carrierIds: ['smsc:0e01'] };
    const send = imJob('sms', '+64211234577', { type: 'text' }, 'He karere hou — 新消息');
    // One key: one partition, one batch.
    await bus.publish(
      topicName('sms'),
      [question, send].map((job) => ({ key: 'same', value: encodeJob(job) })),
    );
    await eventually(async () => ((await bus.lag(topicName('sms'), 'sms-workers')) === 0 ? true : undefined), 10_000);
    // Five hand-outs of two tries each, then no more.
    expect(asked.length).toBe(10);
    expect((await queried('unaskable')) - before).toBe(1);
    expect(warnings).toEqual([expect.stringContaining('never answered')]);
    expect(statuses.filter((u) => u.id === question.id)).toEqual([]);
    expect(statuses.filter((u) => u.id === send.id && u.status === 'submitted')).toHaveLength(1);
    expect(sends()).toBe(1);
  });

  it('leaves a question its carrier never answers on the bus when the worker stops during its last hand-out, for another worker to ask', async () => {
    const before = await queried('unaskable');
    let asked = 0;
    let answerLast!: () => void;
    const last = new Promise<void>((resolve) => (answerLast = resolve));
    const carrier: Carrier = {
      ...carrierParts,
      name: 'never-answers',
      send: async (job) => ({ carrierIds: [`c-${job.id}`] }),
      async query() {
        // The fifth hand-out's question is still with the carrier when the worker stops.
        if (++asked === 5) await last;
        throw new HermodError('timeout', 'no query_sm_resp', { retryable: true });
      },
      onReport: () => undefined,
    };
    const { bus, worker } = await workerWith(carrier, quietLog, { maxAttempts: 1 });
    const question = { ...imJob('sms', '+64211234578', { type: 'text' }, 'Kua tae? 📬'), carrierIds: ['smsc:0f01'] };
    await bus.publish(topicName('sms'), [{ key: question.destination, value: encodeJob(question) }]);
    await eventually(() => (asked === 5 ? true : undefined), 10_000);
    const stopped = worker.stop();
    answerLast();
    await stopped;
    expect(await bus.lag(topicName('sms'), 'sms-workers')).toBe(1);
    expect((await queried('unaskable')) - before).toBe(0);
  });

  it('leaves the message as it is, and takes the job off the bus, when its carrier cannot be asked at all', async () => {
    const before = await queried('unaskable');
    const sent: string[] = [];
    const carrier: Carrier = {
      ...carrierParts,
      name: 'http-api',
      async send(job) {
        sent.push(job.id);
        return { carrierIds: [`c-${job.id}`] };
      },
      onReport: () => undefined,
    };
    const { bus, statuses } = await workerWith(carrier);
    const job = { ...imJob('sms', '+64211234575', { type: 'text' }, 'Kia ora'), carrierIds: ['api:1'] };
    await bus.publish(topicName('sms'), [{ key: job.destination, value: encodeJob(job) }]);
    await eventually(async () => ((await bus.lag(topicName('sms'), 'sms-workers')) === 0 ? true : undefined), 5_000);
    expect(statuses).toEqual([]);
    expect(sent).toEqual([]);
    expect((await queried('unaskable')) - before).toBe(1);
  });
});

describe('a channel worker whose carrier is down', () => {
  it('acknowledges at once a batch with nothing left to send (each job submitted before), not when a bind comes back', async () => {
    const carrier: Carrier = {
      ...carrierParts,
      name: 'down',
      ready: () => new Promise<void>(() => undefined),
      send: async () => {
        throw new Error('never sent');
      },
      onReport: () => undefined,
    };
    const bus = createMemoryBus();
    const state = createMemoryState();
    const worker = await startChannelWorker({ channel: 'sms', bus, state, carrier, log: quietLog });
    kit.defer(async () => {
      await Promise.race([worker.stop(), new Promise((r) => setTimeout(r, 200))]);
      await bus.close();
    });
    const job = imJob('sms', '+64211234569', { type: 'text' }, 'Kua tae kē — 已送达 ✅');
    await state.advanceStatuses([{ id: job.id, status: 'submitted', at: Date.now() }]);
    await state.putCarrierIds([{ carrierId: 'c-before', messageId: job.id }]);
    await bus.publish(topicName('sms'), [{ key: job.id, value: encodeJob(job) }]);
    await eventually(async () => ((await bus.lag(topicName('sms'), 'sms-workers')) === 0 ? true : undefined), 5_000);
  });
});

describe('a channel worker whose carrier withdrew a message from its queue', () => {
  it('waits for the carrier again before the next hand-over, as before any hand-over but the batch’s first', async () => {
    let readyAsked = 0;
    let tries = 0;
    const carrier: Carrier = {
      ...carrierParts,
      name: 'withdrew-once',
      ready: async () => void readyAsked++,
      async send(job) {
        if (++tries === 1) throw heldBackError();
        return { carrierIds: [`c-${job.id}`] };
      },
      onReport: () => undefined,
    };
    const { bus, statuses } = await workerWith(carrier);
    const job = imJob('sms', '+64211234570', { type: 'text' }, 'Tatari ake — 稍等 ⏳');
    await bus.publish(topicName('sms'), [{ key: job.id, value: encodeJob(job) }]);
    await eventually(() => (statuses.some((u) => u.id === job.id && u.status === 'submitted') ? true : undefined), 5_000);
    expect(tries).toBe(2);
    // Once for the batch, once before the second hand-over.
    expect(readyAsked).toBe(2);
  });
});

describe('a channel worker whose hot state fails just after the carrier took a message', () => {
  it('sends every message of the batch once: the one whose carrier ids could not be stored, and the one still with the carrier', async () => {
    const bus = createMemoryBus();
    const memory = createMemoryState();
    let failOnce = true;
    const state: HotState = {
      ...memory,
      putCarrierIds: async (pairs) => {
        if (failOnce) {
          failOnce = false;
          throw new HermodError('unavailable', 'storing carrier ids: Redis is failing over', { retryable: true });
        }
        return memory.putCarrierIds(pairs);
      },
    };
    const sends = new Map<string, number>();
    // The first job is answered at once, the second only after a while (a slow carrier).
    const carrier: Carrier = {
      name: 'slow-and-fast',
      async send(job) {
        sends.set(job.id, (sends.get(job.id) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, job.content.startsWith('slow') ? 400 : 5));
        return { carrierIds: [`c-${job.id}-${sends.get(job.id)}`] };
      },
      ready: async () => undefined,
      onReport: () => undefined,
      onInbound: () => undefined,
      close: async () => undefined,
    };
    const statuses: StatusUpdate[] = [];
    await bus.subscribe(topicName('status'), async (records) => void statuses.push(...records.map((r) => decodeStatus(r.value))), { group: 'test' });
    const worker = await startChannelWorker({ channel: 'wab', bus, state, carrier, log: quietLog, retryBaseMs: 10 });
    kit.defer(async () => {
      await worker.stop();
      await bus.close();
    });
    const fast = imJob('wab', '+64211234565', { type: 'text' }, 'fast — Kia ora 👋🏽');
    const slow = imJob('wab', '+64211234566', { type: 'text' }, 'slow — 你好');
    await bus.publish(topicName('wab'), [
      { key: fast.id, value: encodeJob({ ...fast, content: 'fast — Kia ora 👋🏽' }) },
      { key: slow.id, value: encodeJob({ ...slow, content: 'slow — 你好' }) },
    ]);
    await eventually(() => [fast.id, slow.id].every((id) => statuses.some((s) => s.id === id && s.status === 'submitted')), 10_000);
    await new Promise((r) => setTimeout(r, 800));
    expect([sends.get(fast.id), sends.get(slow.id)]).toEqual([1, 1]);
  });
});

/**
 * A worker of `channel` on `bus` whose carrier holds any job whose text starts `pōturi` (one application's message to a
 * recipient the provider is slow on: its rate limit, a timeout) until `release`; the sends per job and the statuses.
 */
async function workerSlowForOne(bus: Bus, channel: string) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const sends = new Map<string, number>();
  const { state, statuses } = await workerSending(bus, channel, 'slow-for-one', async (job) => {
    sends.set(job.id, (sends.get(job.id) ?? 0) + 1);
    if (job.content.startsWith('pōturi')) await held;
  });
  kit.defer(async () => release());
  return { state, sends, statuses, release };
}

/**
 * A worker of `channel` on `bus` whose carrier runs `send` for each job (a carrier id `c-<id>` when it resolves) and
 * the statuses it reports; stopped (and the bus closed) after the test.
 */
async function workerSending(
  bus: Bus,
  channel: string,
  name: string,
  send: (job: OutboundJob) => Promise<void>,
  options: Partial<Pick<ChannelWorkerOptions, 'maxAttempts' | 'deferral'>> = {},
) {
  const state = createMemoryState();
  const carrier: Carrier = {
    name,
    async send(job) {
      await send(job);
      return { carrierIds: [`c-${job.id}`] };
    },
    ready: async () => undefined,
    onReport: () => undefined,
    onInbound: () => undefined,
    close: async () => undefined,
  };
  const statuses: StatusUpdate[] = [];
  await bus.subscribe(topicName('status'), async (records) => void statuses.push(...records.map((r) => decodeStatus(r.value))), { group: 'test' });
  const worker = await startChannelWorker({ channel, bus, state, carrier, log: quietLog, retryBaseMs: 10, ...options });
  kit.defer(async () => {
    await worker.stop();
    await bus.close();
  });
  return { state, statuses };
}

describe.each([
  ['the in-process bus', () => createMemoryBus({ partitions: 1 })],
  [
    'Redis Streams',
    () => {
      const prefix = randomPrefix();
      prefixes.add(prefix);
      return createRedisBus({ redis: REDIS_URL, prefix, partitions: 1 });
    },
  ],
])('a channel worker on %s whose carrier is slow for one message', (_, makeBus) => {
  it('sends the messages behind it in its partition meanwhile, another application’s among them, and each once', async () => {
    const bus = makeBus();
    const { sends, statuses, release } = await workerSlowForOne(bus, 'wab');
    const slow = imJob('wab', '+64211234567', { type: 'text' }, 'pōturi — Kia ora 🐢');
    await bus.publish(topicName('wab'), [{ key: slow.id, value: encodeJob(slow) }]);
    await eventually(() => sends.get(slow.id) === 1);
    const others = [
      imJob('wab', '+64211234568', { type: 'text' }, 'tere — 你好 🐇'),
      { ...imJob('wab', '+64211234569', { type: 'text' }, 'tere — Tēnā koe'), applicationId: 'another-app' },
    ];
    // The same job handed over again (recovery) while it is with the carrier: not sent a second time.
    await bus.publish(
      topicName('wab'),
      [...others, slow].map((j) => ({ key: j.id, value: encodeJob(j) })),
    );
    await eventually(() => others.every((j) => statuses.some((s) => s.id === j.id && s.status === 'submitted')), 5_000);
    expect(statuses.some((s) => s.id === slow.id && s.status === 'submitted')).toBe(false);
    release();
    await eventually(() => statuses.some((s) => s.id === slow.id && s.status === 'submitted'), 5_000);
    expect([...sends.values()]).toEqual([1, 1, 1]);
  });
});

describe('a channel worker holding a slow job when a paused campaign is resumed', () => {
  it('sends the campaign message parked in the same batch once it is handed over again, without waiting for the slow one', async () => {
    const bus = createMemoryBus({ partitions: 1 });
    const { state, sends, statuses, release } = await workerSlowForOne(bus, 'sms');
    const campaignId = 256;
    await state.setCampaignControl(campaignId, 'paused');
    const slow = imJob('sms', '+64211234570', { type: 'text' }, 'pōturi — Kia ora 🐢');
    const member = { ...imJob('sms', '+64211234571', { type: 'text' }, 'Kia ora Mere 👋🏽'), id: campaignMessageId(campaignId, 7) };
    await bus.publish(
      topicName('sms'),
      [slow, member].map((j) => ({ key: 'one-partition', value: encodeJob(j) })),
    );
    await eventually(() => sends.get(slow.id) === 1);
    // Resumed: the parked member is handed over again, while the slow job still holds its batch.
    const parked = await state.setCampaignControl(campaignId, 'running');
    expect(parked).toEqual([member.id]);
    await bus.publish(topicName('sms'), [{ key: 'one-partition', value: encodeJob(member) }]);
    await eventually(() => statuses.some((s) => s.id === member.id && s.status === 'submitted'), 5_000);
    expect(sends.get(member.id)).toBe(1);
    release();
  });
});

describe('two channel workers handed the same job at once (a partition lease lost in a Redis stall, its entries taken over)', () => {
  it('sends it once: the second waits while the first sends, sees it submitted and lets it be', async () => {
    const state = createMemoryState();
    const sends: string[] = [];
    const carrier: Carrier = {
      name: 'slow',
      async send(job) {
        sends.push(job.id);
        await new Promise((r) => setTimeout(r, 300));
        return { carrierIds: [`c-${sends.length}`] };
      },
      ready: async () => undefined,
      onReport: () => undefined,
      onInbound: () => undefined,
      close: async () => undefined,
    };
    const statuses: StatusUpdate[] = [];
    const workers = await Promise.all(
      // Each worker on a bus of its own, not marked local: as two worker processes a shared bus handed the same job.
      [createMemoryBus(), createMemoryBus()].map(async (inner) => {
        const bus = { ...inner, local: false };
        await bus.subscribe(topicName('status'), async (records) => void statuses.push(...records.map((r) => decodeStatus(r.value))), { group: 'test' });
        const worker = await startChannelWorker({ channel: 'sms', bus, state, carrier, log: quietLog, retryBaseMs: 10 });
        kit.defer(async () => {
          await worker.stop();
          await bus.close();
        });
        return bus;
      }),
    );
    const job = imJob('sms', '+64211234568', { type: 'text' }, 'Kia ora, kotahi anake — 一次 👋🏽');
    await Promise.all(workers.map((bus) => bus.publish(topicName('sms'), [{ key: job.id, value: encodeJob(job) }])));
    await eventually(() => (statuses.some((s) => s.id === job.id && s.status === 'submitted') ? true : undefined), 10_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(sends).toEqual([job.id]);
    expect(statuses.filter((s) => s.id === job.id && s.status === 'submitted')).toHaveLength(1);
  });
});

/** A worker of `channel` on the in-process bus whose carrier refuses every send for a reason that passes (a greylisting mail server's 451) while `refusing()`. */
async function workerRefusedForAWhile(channel: string, deferral: { firstMs: number; longestMs: number; forMs: number }) {
  const bus = createMemoryBus({ partitions: 1 });
  const sends: string[] = [];
  const { statuses } = await workerSending(
    bus,
    channel,
    'greylisting',
    async (job) => {
      sends.push(job.id);
      throw new HermodError('unavailable', '451 4.7.1 Greylisted, please try again in 5 minutes', { retryable: true });
    },
    { maxAttempts: 3, deferral },
  );
  return { bus, sends, statuses };
}

describe('a channel worker whose carrier keeps refusing a message for a reason that passes', () => {
  it('gives it back to be handed over again later, with when and why, instead of freezing it after its tries', async () => {
    const { bus, sends, statuses } = await workerRefusedForAWhile('email', { firstMs: 60_000, longestMs: 3_600_000, forMs: 86_400_000 });
    const job = imJob('email', 'mere@kōrero.example', { type: 'text', subject: 'Kia ora' }, 'Tēnā koe, e Mere 👋🏽');
    const before = Date.now();
    await bus.publish(topicName('email'), [{ key: job.id, value: encodeJob(job) }]);
    await eventually(() => statuses.some((s) => s.id === job.id && s.retryAt !== undefined), 5_000);
    const deferral = statuses.find((s) => s.retryAt !== undefined)!;
    expect(sends.length).toBe(3);
    expect(deferral.status).toBe('queued');
    expect(deferral.detail).toContain('Greylisted');
    expect(deferral.deferredSince).toBeGreaterThanOrEqual(before);
    // The first wait is a minute after the first refusal.
    expect(deferral.retryAt! - deferral.deferredSince!).toBeGreaterThanOrEqual(60_000);
    expect(statuses.some((s) => s.id === job.id && s.status === 'frozen')).toBe(false);
  });

  it("times each refused try too, by its outcome, so a slow carrier's refusals show in the send-duration histogram", async () => {
    const timed = async (outcome: string): Promise<number> =>
      (await carrierSendDuration.get()).values.find(
        (v) => v.metricName === 'hermod_carrier_send_duration_seconds_count' && v.labels.channel === 'email' && v.labels.outcome === outcome,
      )?.value ?? 0;
    const before = await timed('transient');
    const { bus, statuses } = await workerRefusedForAWhile('email', { firstMs: 60_000, longestMs: 3_600_000, forMs: 86_400_000 });
    const job = imJob('email', 'hēmi@kōrero.example', { type: 'text', subject: 'Anō' }, 'Tēnā anō 🕰️');
    await bus.publish(topicName('email'), [{ key: job.id, value: encodeJob(job) }]);
    await eventually(() => statuses.some((s) => s.id === job.id && s.retryAt !== undefined), 5_000);
    expect((await timed('transient')) - before).toBe(3);
  });

  it('tries a message handed over again once, and waits twice as long as it has been refused so far', async () => {
    const { bus, sends, statuses } = await workerRefusedForAWhile('sms', { firstMs: 60_000, longestMs: 3_600_000, forMs: 86_400_000 });
    const since = Date.now() - 5 * 60_000;
    const job = { ...imJob('sms', '+64211234580', { type: 'text' }, 'Kia ora anō 🔁'), deferredSince: since };
    await bus.publish(topicName('sms'), [{ key: job.id, value: encodeJob(job) }]);
    await eventually(() => statuses.some((s) => s.id === job.id && s.retryAt !== undefined), 5_000);
    const deferral = statuses.find((s) => s.retryAt !== undefined)!;
    expect(sends.length).toBe(1);
    expect(deferral.deferredSince).toBe(since);
    // Refused for 5 minutes so far: tried again in 5 more (doubling, up to an hour).
    expect(deferral.retryAt! - Date.now()).toBeGreaterThan(4.9 * 60_000);
    expect(deferral.retryAt! - Date.now()).toBeLessThanOrEqual(5.1 * 60_000);
  });

  it('freezes it once it has been refused for longer than the retry window', async () => {
    const { bus, statuses } = await workerRefusedForAWhile('sms', { firstMs: 60_000, longestMs: 3_600_000, forMs: 86_400_000 });
    const job = { ...imJob('sms', '+64211234581', { type: 'text' }, 'Kua roa rawa ⌛'), deferredSince: Date.now() - 86_400_000 - 1 };
    await bus.publish(topicName('sms'), [{ key: job.id, value: encodeJob(job) }]);
    await eventually(() => statuses.some((s) => s.id === job.id && s.status === 'frozen'), 5_000);
    expect(statuses.find((s) => s.status === 'frozen')?.detail).toContain('Greylisted');
    expect(statuses.some((s) => s.retryAt !== undefined)).toBe(false);
  });
});

describe('a channel worker sending a long SMS one part of which the SMSC refuses for good', () => {
  const smpp = smppTestKit();

  it('rejects the message naming the part, with the carrier ids of the parts the SMSC took and the route they went by, and passes on their receipts', async () => {
    // The SMSC refuses part 2's destination and delivers the other parts to the handset (a real store-and-forward
    // SMSC sends their receipts however the rest went).
    const sim = await smpp.simulator({
      outcomes: { delivered: 1 },
      receiptDelayMs: 50,
      statusFor: (s) => (s.concat?.seq === 2 ? CommandStatus.ESME_RINVDSTADR : undefined),
    });
    // Routed as the SMS worker pool routes every message (sms-worker-pool.ts): the route is told with the parts.
    const carrier = routedToSpark(sim.port);
    smpp.defer(() => carrier.close());
    const { bus, statuses } = await workerWith(carrier);
    const job = imJob('sms', '+64211234590', { type: 'text' }, 'Kia ora, e hoa mā — tēnā koe i tēnei rā 👋🏽 '.repeat(4));
    await bus.publish(topicName('sms'), [{ key: job.id, value: encodeJob(job) }]);
    await eventually(() => (statuses.filter((s) => s.status === 'received').length === 2 ? true : undefined), 10_000);
    const rejected = statuses.find((s) => s.status === 'rejected');
    expect(rejected).toMatchObject({ id: job.id, detail: expect.stringMatching(/part 2 of 3 refused.*the carrier took 2 of its 3 parts: /) });
    // Parts 1 and 3 were taken: their carrier ids go with the rejection (for history, where core finds the message
    // for their receipts), not as its own carrier id (core would take that as the message submitted).
    expect(rejected!.carrierId).toBeUndefined();
    expect(rejected!.partCarrierIds).toHaveLength(2);
    expect(rejected!.route).toBe('route default → carrier spark');
    const receipts = statuses.filter((s) => s.status === 'received');
    expect(new Set(receipts.map((s) => s.carrierId))).toEqual(new Set(rejected!.partCarrierIds));
    expect(statuses.filter((s) => s.id === job.id).map((s) => s.status)).toEqual(['sent', 'rejected']);
  });
});

describe('a channel worker whose own code fails while it sends (a bug, not the carrier)', () => {
  it('rejects the message with code internal and says so in its log as an error, once a minute, with how many', async () => {
    const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
    const log = {
      debug: () => undefined,
      info: () => undefined,
      warn: (msg: string, fields?: Record<string, unknown>) => void lines.push({ level: 'warn', msg, fields }),
      error: (msg: string, fields?: Record<string, unknown>) => void lines.push({ level: 'error', msg, fields }),
      child: () => log,
    } as unknown as typeof quietLog;
    const carrier: Carrier = {
      ...carrierParts,
      name: 'broken',
      async send() {
        // What a slip in hermod's own code throws: not a carrier's answer.
        throw new TypeError("Cannot read properties of undefined (reading 'segments')");
      },
      onReport: () => undefined,
    };
    const { bus, statuses } = await workerWith(carrier, log);
    const jobs = ['Kia ora 👋🏽', 'Tēnā koe', '你好'].map((text, i) => imJob('sms', `+6421123457${i}`, { type: 'text' }, text));
    await bus.publish(
      topicName('sms'),
      jobs.map((job) => ({ key: job.id, value: encodeJob(job) })),
    );
    await eventually(() => (statuses.filter((s) => s.status === 'rejected').length === 3 ? true : undefined), 10_000);
    expect(statuses.find((s) => s.status === 'rejected')).toMatchObject({ errorCode: 'internal', detail: expect.stringContaining('reading') });
    const errors = lines.filter((l) => l.level === 'error');
    expect(errors).toEqual([expect.objectContaining({ msg: 'sending failed inside hermod (a bug, not the carrier); the message is rejected' })]);
    expect(errors[0]!.fields).toMatchObject({ channel: 'sms', err: expect.anything() });
  });
});

describe('a channel worker handed again a message it submitted, whose submitted report was lost (a Redis bus back without its streams)', () => {
  const smpp = smppTestKit();
  const sends = async (outcome: string): Promise<number> =>
    (await carrierSends.get()).values.find((v) => v.labels.channel === 'sms' && v.labels.outcome === outcome)?.value ?? 0;

  /**
   * An SMS worker routed as the SMS pool routes, remembering its submits in a directory of its own, on hot state the
   * test can empty (`lose()`, as a Redis back without its data); `restart()` starts it again on the same directory.
   */
  async function rememberingWorker(simPort: number) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-worker-submitted-'));
    smpp.defer(async () => fs.rmSync(dir, { recursive: true, force: true }));
    const carrier = routedToSpark(simPort);
    smpp.defer(() => carrier.close());
    const hot = { state: createMemoryState() };
    const state = new Proxy({} as HotState, {
      get: (_target, key) => {
        const value = (hot.state as unknown as Record<PropertyKey, unknown>)[key];
        return typeof value === 'function' ? value.bind(hot.state) : value;
      },
    });
    const bus = createMemoryBus();
    const statuses: StatusUpdate[] = [];
    await bus.subscribe(topicName('status'), async (records) => void statuses.push(...records.map((r) => decodeStatus(r.value))), { group: 'test' });
    const start = () => startChannelWorker({ channel: 'sms', bus, state, carrier, log: quietLog, submittedMemory: { dir } });
    let worker = await start();
    smpp.defer(async () => {
      await worker.stop();
      await bus.close();
    });
    return {
      dir,
      statuses,
      send: (job: OutboundJob) => bus.publish(topicName('sms'), [{ key: job.id, value: encodeJob(job) }]),
      lose: () => void (hot.state = createMemoryState()),
      restart: async () => {
        await worker.stop();
        worker = await start();
      },
    };
  }

  /** Sends a long message (three parts, UCS-2 for its macrons) and resolves with its `submitted` once its receipts came too. */
  async function submittedWithReceipts(w: Awaited<ReturnType<typeof rememberingWorker>>, destination: string) {
    const job = imJob('sms', destination, { type: 'text' }, 'Kia ora, e hoa mā — 你好 👋🏽 tēnā koe i tēnei rā '.repeat(3));
    await w.send(job);
    await eventually(() => (w.statuses.filter((s) => s.id === job.id && s.status === 'received').length === 3 ? true : undefined), 10_000);
    const first = w.statuses.find((s) => s.id === job.id && s.status === 'submitted')!;
    expect(first.partCarrierIds).toHaveLength(2);
    return { job, first };
  }

  /** What must follow a second hand-over: no submit, `submitted` again with the same carrier ids, a query_sm a part. */
  async function expectReportedAndAsked(
    w: Awaited<ReturnType<typeof rememberingWorker>>,
    sim: { submitCount: number; queryCount: number },
    sent: Awaited<ReturnType<typeof submittedWithReceipts>>,
    submits: number,
    queries: number,
  ) {
    const { job, first } = sent;
    await eventually(() => (w.statuses.filter((s) => s.id === job.id && s.status === 'submitted').length === 2 ? true : undefined), 10_000);
    const again = w.statuses.filter((s) => s.id === job.id && s.status === 'submitted')[1]!;
    expect(again).toMatchObject({ carrierId: first.carrierId, partCarrierIds: first.partCarrierIds, detail: first.detail, at: expect.any(Number) });
    expect(again.at).toBeLessThanOrEqual(first.at);
    // Asked about each part, as after a loss, and what the SMSC found reported as the receipts were.
    await eventually(() => (w.statuses.filter((s) => s.id === job.id && s.detail === 'found by query_sm').length === 3 ? true : undefined), 10_000);
    expect(sim.queryCount - queries).toBe(3);
    expect(
      w.statuses
        .filter((s) => s.id === job.id && s.detail === 'found by query_sm')
        .map((s) => s.carrierId)
        .sort(),
    ).toEqual([first.carrierId, ...first.partCarrierIds!].sort());
    expect(sim.submitCount).toBe(submits);
  }

  it('submits nothing to the SMSC, reports submitted with the same carrier ids, and asks with query_sm', async () => {
    const sim = await smpp.simulator({ receiptDelayMs: 0 });
    const w = await rememberingWorker(sim.port);
    // On the dashboards from the worker's start.
    expect((await carrierSends.get()).values.some((v) => v.labels.channel === 'sms' && v.labels.outcome === 'already_submitted')).toBe(true);
    const sent = await submittedWithReceipts(w, '+64211234596');
    const submits = sim.submitCount;
    expect(submits).toBe(3);
    const counted = await sends('already_submitted');

    // Hot state lost with its submit marks; the job handed over again, as core's recovery does.
    w.lose();
    const queries = sim.queryCount;
    await w.send(sent.job);
    await expectReportedAndAsked(w, sim, sent, submits, queries);
    expect((await sends('already_submitted')) - counted).toBe(1);
  });

  it('does so too after the worker starts again, from what it wrote in its data directory', async () => {
    const sim = await smpp.simulator({ receiptDelayMs: 0 });
    const w = await rememberingWorker(sim.port);
    const sent = await submittedWithReceipts(w, '+64211234597');
    const submits = sim.submitCount;
    await w.restart();
    w.lose();
    const queries = sim.queryCount;
    await w.send(sent.job);
    await expectReportedAndAsked(w, sim, sent, submits, queries);
    expect(fs.readdirSync(w.dir).sort()).toEqual(['submitted-sms-0.jsonl', 'submitted-sms-0.pid']);
  });
});
