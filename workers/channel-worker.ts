import path from 'node:path';
import type { Bus, DeliveredRecord, Subscription } from '../core/ports/bus';
import { publishInParts } from '../core/ports/publish-in-parts';
import { topicName } from '../core/ports/bus';
import type { HotState } from '../core/ports/state';
import { stageOf, type MessageStatus } from '../core/domain/message-status';
import { decodeJob, decodeRecords, encodeInbound, encodeStatus, type OutboundJob, type StatusUpdate } from '../core/ports/bus-payloads';
import { createVoidBatcher } from '../lib/void-batcher';
import { HermodError, toHermodError } from '../lib/errors';
import { retryUntilDone } from '../lib/retry-until-done';
import { carrierQueries, carrierSendDuration, carrierSends } from '../lib/metrics';
import type { Logger } from '../lib/log';
import { isHeldBack, takenParts, takenPartsRoute, type Carrier, type CarrierReport } from './carrier';
import { createCampaignGate } from './campaign-gate';
import { UncertainSendError } from './uncertain-send-error';
import { processSpan } from '../core/ports/bus-spans';
import { activeTraceparent, startSpan, tracingOn, type TraceSpan } from '../lib/tracing';
import { createReceiptTraces } from './receipt-traces';
import { handsetKey } from '../core/domain/handset-key';
import { createSendClaims } from './send-claims';
import { rateLimitedWarning } from '../lib/rate-limited-warning';
import { claimSubmittedMemoryFile, openSubmittedMemory, type Submitted, type SubmittedMemory } from './submitted-memory';

/** A submit whose `submitted` report is on its way: its message, and the receipts waiting for that report. */
interface OnTheWay {
  messageId: string;
  waiting: (() => void)[] | undefined;
}

export interface ChannelWorkerOptions {
  channel: string;
  bus: Bus;
  state: HotState;
  carrier: Carrier;
  log: Logger;
  /** Tries, a moment apart, for a transient carrier error before the message is deferred (see `deferral`), default 4 (some 3.5 s). */
  maxAttempts?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Jobs taken from the channel's topic at a time, per partition (default 512). */
  maxBatch?: number;
  /**
   * A message its carrier still refuses, for a reason that passes, after
   * `maxAttempts` is given back to core to be handed over again later
   * (status `queued` with `retryAt`), so it holds no batch while it waits: the
   * first time `firstMs` after its first refusal, then as long as it has been
   * refused so far (doubling) up to `longestMs`, each time tried once; frozen
   * once it has been refused for `forMs`. Default 1 min, 1 h, 24 h.
   */
  deferral?: Deferral;
  /**
   * Where the worker remembers what its carrier took (submitted-memory.ts), so that a message handed over again
   * after its `submitted` report was lost (a Redis bus back without its streams) is not sent again: reported
   * submitted with the carrier ids it kept, and asked about. Off without it (the pools turn it on on the Redis bus).
   */
  submittedMemory?: { dir: string; horizonMs?: number; maxEntries?: number };
}

export interface Deferral {
  firstMs: number;
  longestMs: number;
  forMs: number;
}

export interface ChannelWorker {
  /** Stops taking work and waits for the batches in hand to finish. */
  stop(): Promise<void>;
}

const SUBMITTED = stageOf('submitted');
/** How long a stopping worker still tries a refused status report. */
const STOP_RETRY_MS = 5000;
/** Batches of one partition a worker sends at once (on a bus that hands out more than one). */
const BATCHES_IN_HAND = 4;
/** Questions to the carrier (OutboundJob.carrierIds) a batch has on their way at once. */
const QUESTIONS_AT_ONCE = 64;
/**
 * Hand-outs of a question its carrier keeps failing to answer (an SMSC timing out every query_sm) before it is taken
 * off the bus as unaskable: failed for good, its batch would be handed out again and again, and the sends behind it
 * on its partition would never go.
 */
const QUESTION_HAND_OUTS = 5;

/**
 * A worker of one channel's pool: takes jobs from the channel's topic, skips
 * those already sent (redeliveries after a crash), sends the rest through the
 * carrier, and reports every status change on the status topic. A batch is
 * acknowledged only when each of its messages has an outcome, so a crash
 * means redelivery, never loss.
 */
export async function startChannelWorker(options: ChannelWorkerOptions): Promise<ChannelWorker> {
  const { bus, state, carrier, log, channel } = options;
  const maxAttempts = options.maxAttempts ?? 4;
  const retryBaseMs = options.retryBaseMs ?? 500;
  const retryMaxMs = options.retryMaxMs ?? 30_000;
  const deferral = options.deferral ?? { firstMs: 60_000, longestMs: 3_600_000, forMs: 86_400_000 };
  let stopping = false;
  const memory = openMemory(options);

  // Statuses taken twice are taken once: a batch too large for the bus together goes in parts.
  const publishStatuses = (updates: StatusUpdate[], untilDurable: boolean) =>
    publishInParts(
      bus,
      topicName('status'),
      updates.map((u) => ({ key: u.id || u.carrierId || '', value: encodeStatus(u) })),
      { untilDurable },
    );
  /**
   * A status the worker reports about its own send (sent, submitted, a refusal)
   * is tried again until the bus takes it: failing it would fail the send that
   * caused it, which the carrier already has (sent again: a duplicate), and a
   * status dropped is a status and callback never seen. Only a stop gives up
   * (after `STOP_RETRY_MS`): the job, not acknowledged, comes back, and a job
   * the carrier took is then reported, not sent again.
   */
  const publishOwnStatuses = (updates: StatusUpdate[]): Promise<void> =>
    untilDone(() => publishStatuses(updates, false), 'publish status reports', { reports: updates.length });
  /**
   * What must follow a submit the carrier took (its carrier ids stored, its
   * status reported), tried again while it fails for a reason that passes:
   * giving up would leave the message to be sent again. At a stop, given up
   * after `STOP_RETRY_MS`.
   */
  const untilDone = (work: () => Promise<unknown>, what: string, fields: Record<string, unknown>): Promise<void> => {
    let stoppedAt: number | undefined;
    const giveUp = (): boolean => {
      if (stopping) stoppedAt ??= Date.now();
      return stoppedAt !== undefined && Date.now() - stoppedAt >= STOP_RETRY_MS;
    };
    return retryUntilDone(work, { what, log, fields, giveUp });
  };
  // One publish at a time, so a message's statuses reach the bus in the order they happened: with two,
  // a `submitted` could overtake the slower publish holding its `sent`, which core then refused as a step back.
  const statuses = createVoidBatcher<StatusUpdate>(
    async (updates) => {
      await publishOwnStatuses(updates);
    },
    { maxItems: 2000, maxDelayMs: 0, maxConcurrent: 1 },
  );
  // Delivery reports are acknowledged to the carrier only once durable: a batch waits for its records to be handled.
  const reports = createVoidBatcher<StatusUpdate>(
    async (updates) => {
      await publishStatuses(updates, true);
    },
    { maxItems: 2000, maxDelayMs: 0, maxConcurrent: 16 },
  );
  // A status names the span it was reported in (tracing on), so core's handling of it joins the message's trace.
  // Built field by field: one shape for every report, three a message.
  const report = (
    id: string,
    status: MessageStatus,
    extra?: Pick<StatusUpdate, 'carrierId' | 'partCarrierIds' | 'route' | 'errorCode' | 'detail' | 'retryAt' | 'deferredSince'>,
  ): Promise<void> =>
    statuses.add({
      id,
      status,
      at: Date.now(),
      channel,
      carrierId: extra?.carrierId,
      partCarrierIds: extra?.partCarrierIds,
      route: extra?.route,
      errorCode: extra?.errorCode,
      detail: extra?.detail,
      trace: activeTraceparent(),
      retryAt: extra?.retryAt,
      deferredSince: extra?.deferredSince,
    });
  /**
   * Each submit's carrier ids (a message's parts, never split between writes),
   * stored with those of the other submits answered in the same turn of the
   * event loop: one write to hot state, not one a message. Before the next
   * turn reads the socket, so a receipt that comes after its submit's answer
   * still finds the message.
   */
  const carrierIdWrites = createVoidBatcher<{ carrierId: string; messageId: string }[]>(
    async (messages) => {
      const pairs = messages.length === 1 ? messages[0]! : messages.flat();
      await untilDone(() => state.putCarrierIds(pairs), 'store carrier ids', { messages: messages.length, first: pairs[0]?.messageId });
    },
    { maxItems: 2000, maxDelayMs: 0, maxConcurrent: 4 },
  );
  const receiptTraces = createReceiptTraces();
  /**
   * The `submitted` reports on their way, by carrier id. A receipt can come
   * while its submit's `submitted` waits behind another publish (a handset
   * answering within milliseconds, a broker slow a moment); published first,
   * core would take `received` and then refuse `submitted` as a step back,
   * and the client would never be told it. So a receipt waits for it here.
   * Each names its message: a receipt that comes before the carrier ids are
   * stored (a carrier whose final answer follows its acceptance at once, an
   * SMSC's receipt in the same read as the submit's answer) finds it here.
   */
  const submittedOnTheWay = new Map<string, OnTheWay>();
  /** For a report not awaited: given up at a stop with the bus still away, or refused for a reason that will not pass. */
  const unreported = (id: string, status: MessageStatus) => (err: unknown) =>
    log.error(stopping ? 'gave up a status report at the stop' : 'the bus refused a status report for good', { err, id, status });

  carrier.onReport(async (r: CarrierReport) => {
    // Its name and attributes made only while tracing is on: a receipt a message.
    const span = tracingOn()
      ? startSpan(`receipt ${carrier.name}`, {
          kind: 'consumer',
          parent: receiptTraces.take(r.carrierId) ?? null,
          attributes: { 'hermod.carrier_id': r.carrierId, 'hermod.status': r.status },
        })
      : undefined;
    try {
      let carrierId = r.carrierId;
      let id = r.messageId || submittedOnTheWay.get(r.carrierId)?.messageId || ((await state.getMessageIdByCarrierId(r.carrierId)) ?? '');
      // Submitted by an earlier version, which kept the carrier id as the carrier wrote it.
      if (!id && r.carrierIdAsWritten) {
        id = (await state.getMessageIdByCarrierId(r.carrierIdAsWritten)) ?? '';
        if (id) carrierId = r.carrierIdAsWritten;
      }
      const onTheWay = submittedOnTheWay.get(r.carrierId);
      if (onTheWay) await new Promise<void>((resolve) => (onTheWay.waiting ??= []).push(resolve));
      span?.setAttribute('hermod.message_id', id);
      await reports.add({
        id,
        status: r.status,
        at: r.at,
        carrierId,
        ...(r.carrierIdAsWritten && carrierId !== r.carrierIdAsWritten ? { carrierIdAsWritten: r.carrierIdAsWritten } : {}),
        errorCode: r.errorCode,
        channel,
        ...(r.detail ? { detail: r.detail } : {}),
        trace: span?.traceparent,
      });
      span?.end();
    } catch (err) {
      span?.end(err);
      // Redis or the bus out of reach: the carrier's warning says so (it sends the report again), one line, not two.
      if (!(err instanceof HermodError && err.code === 'unavailable')) log.error('could not publish a delivery report', { err, carrierId: r.carrierId });
      throw err;
    }
  });

  // Replies from handsets go to core, keyed by the handset so one sender's replies stay in order.
  carrier.onInbound((m) => {
    bus
      .publish(topicName('inbound'), [{ key: handsetKey(m.source), value: encodeInbound({ ...m, channel }) }])
      .catch((err) => log.error('could not publish an inbound message', { err, source: m.source }));
  });

  /** A job overtaken while it waited (an IM attempt whose fallback started) is dropped, never sent. */
  const cancelled = async (job: OutboundJob): Promise<boolean> => {
    if (!(await state.wereCancelled([job.id]))[0]) return false;
    dropCancelled(job);
    return true;
  };
  const dropCancelled = (job: OutboundJob): void => {
    carrierSends.inc({ channel, outcome: 'cancelled' });
    log.debug('job cancelled before it reached the carrier', { id: job.id });
  };

  const campaigns = createCampaignGate(state);
  // The send-duration histogram's series of this channel, by outcome, and its submitted count, made once: a timer's
  // closure and three label objects a message fewer than startTimer and inc with labels.
  const sendDurations = new Map<string, ReturnType<typeof carrierSendDuration.labels>>();
  const timeSend = (startedAt: number, outcome: string): void => {
    let series = sendDurations.get(outcome);
    if (!series) sendDurations.set(outcome, (series = carrierSendDuration.labels({ channel, outcome })));
    series.observe((performance.now() - startedAt) / 1000);
  };
  const sendsSubmitted = carrierSends.labels({ channel, outcome: 'submitted' });
  /**
   * A send that failed in hermod's own code (a TypeError, say: carriers' failures come as HermodError) rejects its
   * message like a carrier's refusal would, but is a bug to tell: an error line at once, then one a minute at most
   * with how many more.
   */
  let internalFailures = { toldAt: 0, since: 0 };
  const internalFailure = (id: string, err: unknown): void => {
    internalFailures.since++;
    if (Date.now() - internalFailures.toldAt < 60_000) return;
    log.error('sending failed inside hermod (a bug, not the carrier); the message is rejected', { channel, id, err, messages: internalFailures.since });
    internalFailures = { toldAt: Date.now(), since: 0 };
  };
  /** A campaign message the operator paused (parked: sent again on resume) or cancelled (ends `dead`). */
  const heldByOperator = async (job: OutboundJob): Promise<boolean> => {
    const verdict = await campaigns.verdict(job.id);
    if (verdict === 'send') return false;
    carrierSends.inc({ channel, outcome: verdict === 'parked' ? 'paused' : 'cancelled' });
    if (verdict === 'cancelled') await report(job.id, 'dead', { detail: 'campaign cancelled' });
    return true;
  };

  // A bus whose jobs reach only this process's workers cannot hand one to two workers: nothing to claim.
  const claims = bus.local ? undefined : createSendClaims(state, () => stopping);
  /** Jobs this worker is sending now, in any of its batches. */
  const inHand = new Set<string>();

  /**
   * Sends one job until it has an outcome. `checked`: its batch found the
   * carrier ready and the job not cancelled just now, so the first try asks
   * neither again (a read of hot state a message, and two promises, fewer).
   */
  const sendOne = async (job: OutboundJob, redelivered: boolean, checked: boolean): Promise<void> => {
    // Handed over again after refusals: one try now, as a mail server's queue run.
    const attempts = job.deferredSince === undefined ? maxAttempts : 1;
    let firstRefusedAt: number | undefined;
    let checkedByBatch = checked;
    for (let attempt = 1; ; attempt++) {
      // Checked right before each hand-over (the first one by the batch): the wait for the carrier, a retry's
      // back-off or a withdrawal from the carrier's queue may be long.
      if (!checkedByBatch) {
        await carrier.ready();
        if (await cancelled(job)) return;
      }
      checkedByBatch = false;
      if (campaigns.verdictNow(job.id) !== 'send' && (await heldByOperator(job))) return;
      let written = false;
      let taken = false;
      const startedAt = performance.now();
      let submit: TraceSpan | undefined;
      try {
        // Awaited as the carrier's own promise, span or not: the time from the
        // submit's answer to its carrier ids being stored must not grow (a receipt races it).
        submit = tracingOn() ? startSpan(`submit ${carrier.name}`, { kind: 'client', attributes: { 'hermod.attempt': attempt } }) : undefined;
        const send = () =>
          carrier.send(
            job,
            () => {
              written = true;
              report(job.id, 'sent').catch(unreported(job.id, 'sent'));
            },
            { redelivered, holdBack: () => campaigns.looksHeld(job.id) },
          );
        const { carrierIds, detail } = await (submit ? submit.run(send) : send());
        taken = true;
        memory?.memory.remember(job.id, carrierIds, detail);
        // The receipt for these carrier ids, when it comes, is a child of this submit.
        receiptTraces.remember(carrierIds, submit?.traceparent);
        submit?.end();
        submit = undefined;
        timeSend(startedAt, 'submitted');
        sendsSubmitted.inc();
        if (!written) report(job.id, 'sent').catch(unreported(job.id, 'sent'));
        // Marked before the carrier ids are stored: from then on a receipt finds the message.
        const onTheWay: OnTheWay = { messageId: job.id, waiting: undefined };
        for (const carrierId of carrierIds) submittedOnTheWay.set(carrierId, onTheWay);
        try {
          await carrierIdWrites.add(carrierIds.map((carrierId) => ({ carrierId, messageId: job.id })));
          await report(job.id, 'submitted', {
            carrierId: carrierIds[0] ?? '',
            ...(carrierIds.length > 1 ? { partCarrierIds: carrierIds.slice(1) } : {}),
            ...(detail ? { detail } : {}),
          });
        } finally {
          for (const carrierId of carrierIds) submittedOnTheWay.delete(carrierId);
          // The receipts that came meanwhile (rare): a promise for those only, not one a message.
          if (onTheWay.waiting) for (const resolve of onTheWay.waiting) resolve();
        }
        return;
      } catch (err) {
        // The carrier has it; what failed came after (its report, at a stop): never sent again, the job comes back to be reported.
        if (taken) throw err;
        // A submit the carrier refused or that failed on the way (not what came after it).
        submit?.end(err);
        // Withdrawn from the carrier's queue: the operator's word is checked again, atomically, at the top.
        if (isHeldBack(err)) {
          attempt--;
          continue;
        }
        const e = toHermodError(err);
        timeSend(startedAt, e instanceof UncertainSendError ? 'uncertain' : e.retryable ? 'transient' : 'rejected');
        // Some parts of it are with the carrier and their receipts will come: the report names them as the parts'
        // carrier ids, kept in history with the rejection, where core finds the message for each receipt (a step back
        // from the rejection, refused). Not stored in hot state, which would count the parts taken as the whole
        // message and mark it submitted, nor as the report's own carrier id, which core takes as a submit to wait for.
        const partsTaken = takenParts(err);
        const parts = partsTaken.length > 0 ? { partCarrierIds: [...partsTaken], route: takenPartsRoute(err) || undefined } : {};
        if (e instanceof UncertainSendError) {
          // The carrier may have it: never sent again on its own; an operator decides.
          carrierSends.inc({ channel, outcome: 'uncertain' });
          log.warn('send outcome uncertain; not resending', { id: job.id, err: e });
          await report(job.id, 'frozen', { errorCode: 'uncertain', detail: e.message, ...parts });
          return;
        }
        if (!e.retryable) {
          if (e.code === 'internal') internalFailure(job.id, err);
          carrierSends.inc({ channel, outcome: 'rejected' });
          await report(job.id, 'rejected', { errorCode: e.code, detail: e.message, ...parts });
          return;
        }
        firstRefusedAt ??= Date.now();
        if (attempt >= attempts || stopping) {
          if (stopping) throw e; // leave it unacknowledged: another worker will take it
          const since = job.deferredSince ?? firstRefusedAt;
          const now = Date.now();
          if (now - since < deferral.forMs) {
            // Given back to core, on the status topic (durable) before this batch is acknowledged.
            const retryAt = now + Math.min(deferral.longestMs, Math.max(deferral.firstMs, now - since));
            carrierSends.inc({ channel, outcome: 'deferred' });
            log.info('carrier keeps refusing a message; handed over again later', { id: job.id, retryAt: new Date(retryAt).toISOString(), err: e });
            await report(job.id, 'queued', { errorCode: e.code, detail: e.message, retryAt, deferredSince: since });
            return;
          }
          carrierSends.inc({ channel, outcome: 'frozen' });
          await report(job.id, 'frozen', { errorCode: e.code, detail: e.message });
          return;
        }
        carrierSends.inc({ channel, outcome: 'retried' });
        const delay = Math.min(retryMaxMs, retryBaseMs * 2 ** (attempt - 1));
        log.debug('transient carrier error, retrying', { id: job.id, attempt, delay, err: e });
        await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random() / 2)));
      }
    }
  };

  // One warning a minute for each reason, with how many since: a Redis loss in a campaign asks about thousands.
  const neverAnswered = rateLimitedWarning(log, 'the carrier never answered questions about messages whose receipts may be lost; they stay submitted', {
    count: 'messages',
  });
  const notAskable = rateLimitedWarning(log, 'could not ask the carrier about messages whose receipts may be lost; they stay submitted', { count: 'messages' });
  /**
   * A job that names carrier ids is a question, not a send (OutboundJob.carrierIds: its receipts may have been lost
   * with a Redis bus's streams): the carrier's answer for each part whose outcome is final goes to core as the
   * receipt would have; those still on their way will come as receipts. A carrier that cannot be asked (no query:
   * an HTTP API, an SMSC without query_sm) leaves the message as it is; one that cannot answer now (its session
   * down, no answer) fails the batch, to be asked again, up to its `QUESTION_HAND_OUTS`th hand-out (`handedOutBefore`:
   * the bus's count of earlier ones); then it too is left as it is, unless the worker is stopping (another asks it).
   */
  const askCarrier = async (job: OutboundJob, carrierIds: readonly string[], handedOutBefore: number): Promise<void> => {
    let found: CarrierReport[];
    try {
      if (!carrier.query) throw new HermodError('unprocessable', `carrier ${carrier.name} cannot be asked what became of a message`);
      // Tried a moment apart as a send is (an SMSC throttling a burst of questions), before the batch is failed.
      for (let attempt = 1; ; attempt++) {
        try {
          await carrier.ready();
          found = await carrier.query(job, carrierIds);
          break;
        } catch (err) {
          if (attempt >= maxAttempts || stopping || !toHermodError(err).retryable) throw err;
          const delay = Math.min(retryMaxMs, retryBaseMs * 2 ** (attempt - 1));
          await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random() / 2)));
        }
      }
    } catch (err) {
      const e = toHermodError(err);
      if (e.retryable) {
        if (stopping || handedOutBefore + 1 < QUESTION_HAND_OUTS) throw e;
        carrierQueries.inc({ channel, outcome: 'unaskable' });
        neverAnswered({
          id: job.id,
          err: e,
          handedOut: handedOutBefore + 1,
        });
        return;
      }
      carrierQueries.inc({ channel, outcome: 'unaskable' });
      notAskable({ id: job.id, err: e });
      return;
    }
    await Promise.all(
      found.map((r) =>
        reports.add({
          id: job.id,
          status: r.status,
          at: r.at,
          carrierId: r.carrierId,
          errorCode: r.errorCode,
          channel,
          ...(r.detail ? { detail: r.detail } : {}),
        }),
      ),
    );
    carrierQueries.inc({ channel, outcome: found.length > 0 ? 'final' : 'pending' });
    log.debug('asked the carrier about a message whose receipts may be lost', { id: job.id, carrierIds, final: found.length });
  };

  const alreadySubmitted = rateLimitedWarning(
    log,
    'a message this worker had already submitted was handed over again (its submitted report lost, as with a Redis bus back without its streams); not sent again: reported submitted and asked about',
    { count: 'messages' },
  );
  const sendsAlreadySubmitted = carrierSends.labels({ channel, outcome: 'already_submitted' });
  /**
   * A send of a message this worker remembers submitting, though hot state does not know it as sent: its `submitted`
   * report was lost (a Redis bus back without its streams took it; core then hands the message over again). Reported
   * submitted again, with the carrier ids and time kept, so core records it and finds its receipts; then asked about
   * as a question is, since its receipts may have been lost with the report. Asked once (its tries a moment apart):
   * handed out again, the job would find it submitted and not ask.
   */
  const submittedBefore = async (job: OutboundJob, kept: Submitted): Promise<void> => {
    sendsAlreadySubmitted.inc();
    alreadySubmitted({ id: job.id, submittedAt: new Date(kept.at).toISOString(), carrierIds: kept.carrierIds });
    if (kept.carrierIds.length > 0) await carrierIdWrites.add(kept.carrierIds.map((carrierId) => ({ carrierId, messageId: job.id })));
    await statuses.add({
      id: job.id,
      status: 'submitted',
      at: kept.at,
      channel,
      ...carrierIdsOf(kept),
      detail: kept.detail ?? 'submitted before it was handed over again',
      trace: activeTraceparent(),
    });
    if (kept.carrierIds.length > 0 && carrier.query) await askCarrier(job, kept.carrierIds, QUESTION_HAND_OUTS - 1);
  };

  const handle = async (records: DeliveredRecord[]): Promise<void> => {
    const all = decodeRecords(records, decodeJob, log);
    const questions = all.filter((d) => d.payload.carrierIds !== undefined);
    if (questions.length === 0) return sendAll(all);
    // Side by side: a question waiting for its carrier (its turn in an SMSC's window, its tries a moment apart) does not
    // hold up the batch's sends, nor a failing one stop them, and the other way round. Both settle before the batch
    // fails: handed out again while a question is still with the carrier, it would be asked twice at once.
    const outcomes = await Promise.allSettled([askAll(questions), sendAll(all.filter((d) => d.payload.carrierIds === undefined))]);
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    // A failed question hands the batch out again, its sends then skipped as sent.
    if (failed) throw failed.reason;
  };

  /** Asks the carrier each question, a few at a time: a Redis loss in a campaign hands over thousands. */
  const askAll = async (questions: ReturnType<typeof decodeRecords<OutboundJob>>): Promise<void> => {
    let failed: { reason: unknown } | undefined;
    for (let i = 0; i < questions.length; i += QUESTIONS_AT_ONCE) {
      const asked = await Promise.allSettled(
        questions.slice(i, i + QUESTIONS_AT_ONCE).map((d) => askCarrier(d.payload, d.payload.carrierIds!, d.record.redeliveries)),
      );
      failed ??= asked.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    }
    if (failed) throw failed.reason;
  };

  const sendAll = async (decoded: ReturnType<typeof decodeRecords<OutboundJob>>): Promise<void> => {
    if (decoded.length === 0) return;
    const jobs = decoded.map((d) => d.payload);
    // Jobs whose submit already succeeded (redelivered after a crash, or handed
    // over again by recovery) are not sent again.
    const [current, submitted] = await Promise.all([Promise.all(jobs.map((j) => state.getStatus(j.id))), state.wereSubmitted(jobs.map((j) => j.id))]);
    // The carrier took it, but the worker died before saying so: say it now (with its carrier ids, if this worker
    // remembers them), and do not send it again.
    const untold = jobs.filter((_, i) => submitted[i] && current[i] && stageOf(current[i]!.status) < SUBMITTED);
    for (const j of untold)
      report(j.id, 'submitted', { detail: 'submitted before a restart', ...carrierIdsOf(memory?.memory.recall(j.id)) }).catch(unreported(j.id, 'submitted'));
    // A job handed over twice (recovery, a resumed campaign) is sent once even when both copies share a batch, or
    // are in two batches in hand at once: the copy of one in hand is acknowledged, and should the batch holding the
    // job fail, that batch comes back with it. One hot state no longer knows as sent (its `submitted` lost with a
    // Redis bus's streams) but this worker remembers submitting is not sent either (see submittedBefore).
    const seen = new Set<string>();
    const again: { job: OutboundJob; kept: Submitted }[] = [];
    const todo = decoded.filter((d, i) => {
      const id = d.payload.id;
      if (submitted[i] || (current[i] && stageOf(current[i]!.status) >= SUBMITTED) || inHand.has(id) || seen.has(id)) return false;
      seen.add(id);
      const kept = memory?.memory.recall(id);
      if (kept) again.push({ job: d.payload, kept });
      return !kept;
    });
    for (const d of todo) inHand.add(d.payload.id);
    // Claimed for this worker first (see send-claims.ts): another worker may hold some of them right now.
    let claimed: boolean[] | undefined;
    try {
      claimed = claims ? await claims.take(todo.map((d) => d.payload.id)) : undefined;
    } catch (err) {
      for (const d of todo) inHand.delete(d.payload.id);
      throw err;
    }
    const mine = claimed ? todo.filter((_, i) => claimed![i]) : todo;
    if (claimed) for (let i = 0; i < todo.length; i++) if (!claimed[i]) inHand.delete(todo[i]!.payload.id);
    // The batch's jobs are checked together right before they go to the carrier, not each with a read of its own.
    let cancelledNow: boolean[] = [];
    try {
      // Nothing to send (each job sent before, a copy in hand, or another worker's): acknowledged at once, carrier or not.
      if (mine.length > 0) {
        await carrier.ready();
        cancelledNow = await state.wereCancelled(mine.map((d) => d.payload.id));
      }
    } catch (err) {
      for (const d of mine) inHand.delete(d.payload.id);
      await claims?.release(mine.map((d) => d.payload.id));
      throw err;
    }
    for (const { job } of again) inHand.add(job.id);
    // Every job settles before the batch fails: one failing must not let the
    // batch come back while the others are still with the carrier (sent twice).
    const outcomes = await Promise.allSettled([
      ...again.map(({ job, kept }) => submittedBefore(job, kept).finally(() => inHand.delete(job.id))),
      ...mine.map((d, i) => {
        const job = d.payload;
        if (cancelledNow[i]) {
          inHand.delete(job.id);
          dropCancelled(job);
          return undefined;
        }
        const redelivered = d.record.redeliveries > 0;
        // Out of hand as soon as its own send settles (a parked campaign message at once): a copy handed over
        // later (its resume) is sent, even while other jobs of this batch are still with the carrier.
        const send = (): Promise<void> => sendOne(job, redelivered, true).finally(() => inHand.delete(job.id));
        const span = processSpan(topicName(channel), job.trace, { 'hermod.message_id': job.id });
        if (!span) return send();
        return span.run(send).then(
          () => span.end(),
          (err: unknown) => {
            span.end(err);
            throw err;
          },
        );
      }),
    ]);
    // A job another batch took in hand since (its copy) keeps its claim: that batch lets it go.
    await claims?.release(mine.map((d) => d.payload.id).filter((id) => !inHand.has(id)));
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
    await statuses.drain();
  };

  // Batches side by side: a job whose carrier is slow (or that waits to be tried again) holds up only its own batch,
  // not the jobs behind it in its partition (other applications' among them).
  const subscription: Subscription = await bus.subscribe(topicName(channel), handle, {
    group: `${channel}-workers`,
    maxBatch: options.maxBatch ?? 512,
    inFlight: BATCHES_IN_HAND,
  });
  if (memory) {
    // A line on the dashboards from the start, not "no data" until the first.
    carrierSends.inc({ channel, outcome: 'already_submitted' }, 0);
    log.info('remembering the messages this worker submits', { channel, file: memory.file, remembered: memory.memory.size });
  }
  log.info('channel worker started', { channel, carrier: carrier.name });

  return {
    async stop() {
      stopping = true;
      await subscription.close();
      claims?.stop();
      await carrierIdWrites.drain();
      await statuses.drain();
      memory?.memory.close();
      memory?.release();
    },
  };
}

/** A `submitted` report's carrier ids, from those kept: the first its own, the other parts' beside it. */
function carrierIdsOf(kept: Submitted | undefined): Pick<StatusUpdate, 'carrierId' | 'partCarrierIds'> {
  if (!kept || kept.carrierIds.length === 0) return {};
  return { carrierId: kept.carrierIds[0], ...(kept.carrierIds.length > 1 ? { partCarrierIds: kept.carrierIds.slice(1) } : {}) };
}

/** The worker's memory of what it submitted, in its own file of the directory given (see claimSubmittedMemoryFile). */
function openMemory(options: ChannelWorkerOptions): { memory: SubmittedMemory; file: string; release(): void } | undefined {
  const o = options.submittedMemory;
  if (!o) return undefined;
  let claimed: { file: string; release(): void };
  try {
    claimed = claimSubmittedMemoryFile(o.dir, options.channel);
  } catch (err) {
    // Its file is not writable either: opened, it says so and remembers in memory only.
    options.log.warn('could not claim a file for the messages this worker submits', { err, dir: o.dir });
    claimed = { file: path.join(o.dir, `submitted-${options.channel}-0.jsonl`), release: () => undefined };
  }
  const memory = openSubmittedMemory({ file: claimed.file, log: options.log, horizonMs: o.horizonMs, maxEntries: o.maxEntries });
  return { memory, file: claimed.file, release: claimed.release };
}
