import { replyAddressKey } from '../messages/reply-address';
import { VIA_IM_ATTEMPT } from '../domain/quota-exempt-via';
import type { Bus, Subscription } from '../ports/bus';
import { topicName } from '../ports/bus';
import type { MessageHistory, MessageRecord, StoredMessage } from '../ports/message-history';
import { IM_SETTLED, type ImStore } from '../ports/im-store';
import type { HotState } from '../ports/state';
import type { StatusChange, StatusRecorder } from '../messages/status-recorder';
import type { NumericIds } from '../messages/numeric-ids';
import type { RecentMessages } from '../messages/recent-messages';
import { decodeJob, decodeRecords, encodeJob, type ImJobDetails } from '../ports/bus-payloads';
import { countSegments } from '../messages/segments';
import { isFinal, stageOf, type MessageStatus } from '../domain/message-status';
import type { Logger } from '../../lib/log';
import { imAttempts } from '../../lib/metrics';
import { addressFor, isFailure, reachedEvent, type ImPlan } from './im-plan';
import { imAttemptId, isImAttemptId, parseImAttemptId } from './im-ids';
import { toImStatus, type ImStatusNotice } from './im-status-notice';
import { FifoMap } from '../../lib/fifo-map';
import { toHermodError } from '../../lib/errors';
import { retryUntilDone } from '../../lib/retry-until-done';
import { tooLargeRejection } from '../messages/too-large-rejection';
import { createSendScreen } from '../messages/send-screen';

/** Where the orchestrator tells applications about their IM messages (the callback producer). */
interface ImStatusNotices {
  imStatus(notice: ImStatusNotice): void;
}

const OPTED_OUT = 'destination opted out';
const OVER_QUOTA = "over the application's quota";

interface Open {
  id: string;
  applicationId: string;
  plan: ImPlan;
  current: number;
  timer?: NodeJS.Timeout;
  /** When its current attempt, refused by its carrier for now, is handed over again (see retryAttempt). */
  retry?: NodeJS.Timeout;
  /** Everything that changes this message runs in turn: reports, timeouts, recovery. */
  turn: Promise<void>;
}

interface ImOrchestrator {
  /** Status changes applied by the recorder (attempts report through here). */
  statusApplied(change: StatusChange): void;
  /**
   * The carrier keeps refusing an attempt for a reason that passes (a mail
   * server greylisting): it is handed to its channel again at `retryAt`,
   * unless it was overtaken by then (its timeout, a failure, the outcome).
   * A restart meanwhile hands it over at once (resume), as any attempt not
   * yet confirmed by its carrier.
   */
  retryAttempt(attemptId: string, retryAt: number, deferredSince: number): void;
  stop(): Promise<void>;
}

/**
 * Runs each Intelligent Messaging message's delivery attempts in order. An
 * attempt is its own message (id derived from the message's, see im-ids.ts)
 * on its channel's topic; it succeeds when its channel reports the attempt's
 * event (or delivery) within its timeout, otherwise the next attempt starts.
 * An attempt that is overtaken (timed out or failed) is marked cancelled in
 * hot state before the next one starts, so a worker still holding it (queued,
 * or backing off between retries) drops it instead of sending it. Reports
 * about an attempt that is no longer current are recorded on that attempt but
 * change nothing else: a late `read` on WhatsApp after the SMS fallback
 * started sends nothing, tells nothing and decides nothing.
 *
 * What the application hears (README, Intelligent Messaging): the message's
 * `accepted` (from intake), each attempt's progress with its channel and
 * number, ending in its outcome, and the message's own outcome last. The
 * message's own status goes from `accepted` straight to that outcome, which
 * is marked settled in history; after a restart every unsettled message
 * resumes: its current attempt's timer is re-armed with the time it has
 * left, and an attempt not yet confirmed by its carrier is handed over again
 * (workers skip the ones already submitted). A message refused at intake
 * because its handset opted out is settled as `rejected` and never resumed.
 */
/** Messages recovery takes up side by side after a restart (each a few history lookups). */
const RECOVERY_CONCURRENCY = 16;

export async function startImOrchestrator(deps: {
  bus: Bus;
  state: HotState;
  history: MessageHistory;
  /** Where the messages not yet settled are found after a restart. */
  im: ImStore;
  recorder: StatusRecorder;
  numericIds: NumericIds;
  notices: ImStatusNotices;
  /** Messages just accepted (a refused one is told about before history has it). */
  recent: RecentMessages;
  log: Logger;
  /** Seconds an attempt that gives no timeout (or 0) waits for its event; 0: no deadline. */
  defaultTimeoutSeconds: number;
  /** The WhatsApp business number's phone number id (HERMOD_WAB_SENDER): what WhatsApp attempts are sent from, as replies name it. */
  wabSender?: string;
  /** How far back a restart looks for unsettled messages (longer than the longest sequence of timeouts). */
  recoveryWindowMs?: number;
}): Promise<ImOrchestrator> {
  const { bus, state, history, recorder, notices, log } = deps;
  /**
   * Each attempt to a phone number is screened as it starts, for the number it goes to: a contact's WhatsApp number
   * (intake screened the message's mobile), or one that replied STOP or was blocked since the message was accepted.
   * Not the quota: the message took its share at intake.
   */
  const screen = createSendScreen({ state, quotaOf: async () => undefined, exempt: () => false });
  const open = new Map<string, Open>();
  const taken = new FifoMap<string, true>();
  /** Messages settled by this process lately, so a late report about them runs after their settling. */
  const settledHere = new FifoMap<string, Open>();
  let stopping = false;

  /** Tells the application: about attempt k when given, else about the message as a whole. */
  const tell = (im: Pick<Open, 'id' | 'applicationId' | 'plan'>, status: MessageStatus, k?: number, reason?: string): void => {
    const told = toImStatus(status);
    if (!told) return;
    const attempt = k === undefined ? undefined : { number: k + 1, channel: im.plan.attempts[k]!.channel };
    notices.imStatus({
      applicationId: im.applicationId,
      messageId: im.id,
      status: told,
      reference: im.plan.reference,
      at: Date.now(),
      ...(attempt ? { attempt } : {}),
      ...(reason ? { reason } : {}),
    });
  };

  /** The outcome goes on the message (history), is marked settled, then told. */
  const settle = async (im: Open, status: MessageStatus, detail: string, reason?: string): Promise<void> => {
    clearTimeout(im.timer);
    clearTimeout(im.retry);
    open.delete(im.id);
    // A late failure report (a bounce) waits for this to finish before it looks at the outcome.
    settledHere.set(im.id, im);
    if (settledHere.size > 10_000) settledHere.shift();
    const outcome = toImStatus(status) ?? 'failed';
    await recorder.record([{ messageId: im.id, applicationId: im.applicationId, channel: 'im', status: outcome, at: Date.now(), detail }]);
    await markSettled(im);
    tell(im, outcome, undefined, reason);
    log.debug('im message settled', { id: im.id, status: outcome, attempt: im.current });
  };

  const markSettled = async (im: Pick<Open, 'id' | 'applicationId'>): Promise<void> => {
    const current = (await state.getStatus(im.id))?.status ?? 'accepted';
    // The marker repeats the current status, so it never changes what the message reads as.
    await history.appendEvents([
      { messageId: im.id, applicationId: im.applicationId, status: current, at: Date.now(), detail: IM_SETTLED, carrierId: '', errorCode: '' },
    ]);
  };

  /** Attempt k must never reach its carrier from now on (a worker may still hold it, queued or retrying). */
  const cancel = (im: Open, k: number): Promise<void> => state.cancelSends([imAttemptId(im.id, k)]);

  /** A message refused at intake (opted out, blocked by the operator, over quota): settled as rejected, never sent. */
  const endRefused = async (m: Pick<StoredMessage, 'id' | 'applicationId' | 'content'>, reason: string): Promise<void> => {
    taken.set(m.id, true);
    const im = { id: m.id, applicationId: m.applicationId, plan: JSON.parse(m.content) as ImPlan };
    await markSettled(im);
    tell(im, 'rejected', undefined, reason);
    log.info('im message refused at intake', { id: m.id, reason });
  };

  /** Reached its outcome before a stop, but the settled marker did not follow: mark it, and tell the outcome again (at least once). */
  const settleAgain = async (m: Pick<StoredMessage, 'id' | 'applicationId' | 'content' | 'status'>): Promise<void> => {
    taken.set(m.id, true);
    const im = { id: m.id, applicationId: m.applicationId, plan: JSON.parse(m.content) as ImPlan };
    await markSettled(im);
    tell(im, m.status);
  };

  const timeoutOf = (attempt: ImPlan['attempts'][number]): number => attempt.timeout || deps.defaultTimeoutSeconds;

  const details = (plan: ImPlan): ImJobDetails => ({
    type: plan.type,
    ...(plan.media ? { media: plan.media } : {}),
    ...(plan.template ? { template: plan.template } : {}),
    subject: plan.subject,
    reference: plan.reference,
  });

  /**
   * Hands an attempt to its channel. A refusal the bus may take back (a
   * broker electing a leader, Redis away) is tried again until it goes
   * through or core stops (then the next start resumes the message). An
   * attempt the bus refuses as too large is ended `rejected` with the bus's
   * reason, and false returned: the caller falls back to the next attempt.
   */
  const publishAttempt = async (
    im: Open,
    k: number,
    record: Pick<MessageRecord, 'id' | 'channel' | 'destination' | 'content' | 'acceptedAt'>,
    deferredSince?: number,
  ): Promise<boolean> => {
    const value = encodeJob({
      id: record.id,
      applicationId: im.applicationId,
      channel: record.channel,
      destination: record.destination,
      source: '',
      content: record.content,
      acceptedAt: record.acceptedAt,
      im: details(im.plan),
      deferredSince,
    });
    try {
      await retryUntilDone(() => bus.publish(topicName(record.channel), [{ key: record.destination, value }]), {
        what: 'hand an im attempt to its channel',
        log,
        fields: { id: im.id, attempt: k + 1, channel: record.channel },
        giveUp: () => stopping,
      });
    } catch (err) {
      if (toHermodError(err).code !== 'body_too_large') throw err;
      const rejection = tooLargeRejection({ id: record.id, applicationId: im.applicationId, channel: record.channel }, err);
      clearTimeout(im.timer);
      await endHere(rejection);
      tell(im, 'rejected', k, rejection.detail);
      log.error('an im attempt is too large for its channel’s message bus; it is rejected', { id: im.id, attempt: k + 1, channel: record.channel, err });
      return false;
    }
    await recorder.record([{ messageId: record.id, applicationId: im.applicationId, channel: record.channel, status: 'queued', at: Date.now() }]);
    return true;
  };

  /** Attempts this orchestrator ended itself (no address, too large), whose recorded ending it has acted on already. */
  const endedHere = new Set<string>();
  /** Ends an attempt that never reached its channel: counted failed here, and its applied status is no report to act on. */
  const endHere = async (change: StatusChange): Promise<void> => {
    endedHere.add(change.messageId);
    try {
      await recorder.record([change]);
    } finally {
      // Listeners were told during the record, if it applied; not applied, nothing comes.
      endedHere.delete(change.messageId);
    }
    imAttempts.inc({ channel: change.channel, outcome: 'failed' });
  };

  const armTimer = (im: Open, k: number, startedAt: number): void => {
    const timeout = timeoutOf(im.plan.attempts[k]!);
    if (timeout <= 0) return;
    clearTimeout(im.timer);
    const wait = Math.max(0, startedAt + timeout * 1000 - Date.now());
    im.timer = setTimeout(() => inTurn(im, () => timedOut(im, k)), Math.min(wait, 2 ** 31 - 1));
    im.timer.unref();
  };

  const startAttempt = async (im: Open, k: number, failure: MessageStatus = 'failed'): Promise<void> => {
    if (stopping) return;
    if (k >= im.plan.attempts.length) return settle(im, failure, 'every delivery attempt failed', 'every delivery attempt failed');
    const attempt = im.plan.attempts[k]!;
    im.current = k;
    const id = imAttemptId(im.id, k);
    const address = addressFor(attempt.channel, im.plan.destination);
    const now = Date.now();
    const record: MessageRecord = {
      id,
      numericId: deps.numericIds(),
      applicationId: im.applicationId,
      channel: attempt.channel,
      direction: 'MT',
      destination: address,
      // As a reply names it (the business number's phone number id): what history routes a reply by after a restart.
      source: attempt.channel === 'wab' && deps.wabSender ? deps.wabSender : '',
      content: im.plan.text,
      reference: im.plan.reference,
      messageClass: im.plan.type,
      mask: '',
      smsClass: 0,
      scheduledAt: 0,
      integrationId: '',
      via: VIA_IM_ATTEMPT,
      segments: attempt.channel === 'sms' ? countSegments(im.plan.text) : 1,
      acceptedAt: now,
      replyTo: im.id,
    };
    const accepted = {
      messageId: id,
      applicationId: im.applicationId,
      status: 'accepted' as const,
      at: now,
      detail: `attempt ${k + 1} on ${attempt.channel}`,
      carrierId: '',
      errorCode: '',
    };
    await history.insertMessages([record], [accepted]);
    await state.advanceStatuses([{ id, status: 'accepted', at: now }]);
    tell(im, 'accepted', k);
    if (!address) {
      // Recorded, so the history shows the attempt and why it went nowhere.
      const why = `no ${attempt.channel} address for this destination`;
      await endHere({ messageId: id, applicationId: im.applicationId, channel: attempt.channel, status: 'rejected', at: now, detail: why });
      tell(im, 'rejected', k, why);
      return startAttempt(im, k + 1, 'rejected');
    }
    const [verdict] = attempt.channel === 'email' ? [] : await screen.screen([record], { quota: false });
    if (verdict && !verdict.send) {
      await endHere({ messageId: id, applicationId: im.applicationId, channel: attempt.channel, status: 'rejected', at: now, detail: verdict.detail });
      tell(im, 'rejected', k, verdict.detail);
      return startAttempt(im, k + 1, 'rejected');
    }
    // What a reply is routed by (reply-router.ts): SMS and WhatsApp replies, whose sender hot state compares by its
    // digits (handset-key.ts), with or without the plus WhatsApp leaves off.
    // A WhatsApp attempt is remembered as sent from the business number (its phone number id, as its webhooks
    // name it): several applications share it, and a reply goes to the one whose message the handset got last.
    if (attempt.channel === 'sms' || attempt.channel === 'wab') {
      const source = attempt.channel === 'wab' && deps.wabSender ? replyAddressKey(deps.wabSender) : '';
      await state.rememberLastMessages([{ handset: address, messageId: id, applicationId: im.applicationId, source }]);
    }
    armTimer(im, k, now);
    if (!(await publishAttempt(im, k, record))) return startAttempt(im, k + 1, 'rejected');
  };

  const timedOut = async (im: Open, k: number): Promise<void> => {
    if (im.current !== k || !open.has(im.id) || stopping) return;
    const attempt = im.plan.attempts[k]!;
    const id = imAttemptId(im.id, k);
    const why = `no ${attempt.event || 'delivery'} within ${timeoutOf(attempt)} s`;
    await cancel(im, k);
    // The outcome goes on the attempt in history even when it already reads as delivered (waiting for `read`).
    await history.appendEvents([
      { messageId: id, applicationId: im.applicationId, status: 'expired', at: Date.now(), detail: why, carrierId: '', errorCode: 'attempt_timeout' },
    ]);
    tell(im, 'expired', k, why);
    imAttempts.inc({ channel: attempt.channel, outcome: 'timed_out' });
    log.info('im attempt timed out; falling back', { id: im.id, attempt: k + 1, channel: attempt.channel, next: im.plan.attempts[k + 1]?.channel ?? 'none' });
    await startAttempt(im, k + 1, 'expired');
  };

  const inTurn = (im: Open, work: () => Promise<void>): void => {
    im.turn = im.turn.then(work).catch((err) => log.error('im message step failed', { err, id: im.id }));
  };

  const attemptStatus = async (im: Open | undefined, change: StatusChange): Promise<void> => {
    const { attempt: k } = parseImAttemptId(change.messageId);
    // Not current any more (a fallback started, or the message settled): recorded on the attempt, nothing else.
    if (!im || im.current !== k) {
      imAttempts.inc({ channel: change.channel, outcome: 'late_report' });
      return;
    }
    const attempt = im.plan.attempts[k]!;
    if (change.status !== 'queued') tell(im, change.status, k, isFailure(change.status) ? change.detail || change.errorCode || undefined : undefined);
    if (reachedEvent(attempt.event, change.status)) {
      imAttempts.inc({ channel: attempt.channel, outcome: 'succeeded' });
      return settle(im, change.status, `${attempt.channel}: ${change.status}`);
    }
    if (isFailure(change.status)) {
      imAttempts.inc({ channel: attempt.channel, outcome: 'failed' });
      clearTimeout(im.timer);
      await cancel(im, k);
      return startAttempt(im, k + 1, change.status);
    }
  };

  /**
   * A carrier's failure after the message was delivered by attempt k (an
   * e-mail bounce after the relay's 250): the message becomes `failed` with
   * the carrier's reason, and the application is told about the attempt and
   * the message. A late failure of an attempt that did not deliver (a
   * fallback followed it) changes nothing, as any late report.
   */
  const lateFailure = async (id: string, k: number, change: StatusChange): Promise<boolean> => {
    const stored = await history.findMessage(id);
    if (stored?.status !== 'received') return false;
    if (await history.getMessage(stored.applicationId, imAttemptId(id, k + 1))) return false;
    const im = { id, applicationId: stored.applicationId, plan: JSON.parse(stored.content) as ImPlan };
    const reason = change.detail || change.errorCode || `${change.channel}: failed after delivery`;
    const [applied] = await recorder.record([
      { messageId: id, applicationId: im.applicationId, channel: 'im', status: 'failed', at: change.at, detail: reason },
    ]);
    if (!applied) return false;
    imAttempts.inc({ channel: change.channel, outcome: 'failed_after_delivery' });
    log.info('im message failed after delivery', { id, attempt: k + 1, channel: change.channel, reason });
    tell(im, 'failed', k, reason);
    tell(im, 'failed', undefined, reason);
    return true;
  };

  /** Status changes of attempts whose message recovery has not taken up yet, by message. */
  const heldForRecovery = new Map<string, StatusChange[]>();

  /** A status change of an attempt whose message is not open here: a late report, or a failure after delivery. */
  const notOpen = (change: StatusChange): void => {
    const { messageId: parent, attempt: k } = parseImAttemptId(change.messageId);
    const lateReport = () => taken.has(parent) && imAttempts.inc({ channel: change.channel, outcome: 'late_report' });
    if (change.status !== 'failed') return void lateReport();
    const settled = settledHere.get(parent);
    // A failure after delivery is counted as that; any other late failure as a late report.
    const late = async () => void ((await lateFailure(parent, k, change)) || lateReport());
    if (settled) inTurn(settled, late);
    else late().catch((err) => log.error('could not record a failure after delivery', { err, id: parent }));
  };

  /** Takes up a message from the `im` topic or from recovery, where it stands. */
  const begin = async (m: Pick<StoredMessage, 'id' | 'applicationId' | 'content'>, fresh = false): Promise<void> => {
    // Taken up already in this process (open, or settled since): a redelivery or a recovery hand-over.
    if (taken.has(m.id)) return;
    taken.set(m.id, true);
    if (taken.size > 200_000) taken.shift();
    const plan = JSON.parse(m.content) as ImPlan;
    const im: Open = { id: m.id, applicationId: m.applicationId, plan, current: 0, turn: Promise.resolve() };
    open.set(m.id, im);
    const held = heldForRecovery.get(m.id) ?? [];
    heldForRecovery.delete(m.id);
    // Reports that arrive meanwhile wait their turn behind this.
    let failed: { err: unknown } | undefined;
    im.turn = (fresh ? startAttempt(im, 0) : resume(im, m, held)).catch((err: unknown) => {
      // Not taken up after all (history away): not kept open with no timer, but left to be handed over again (the
      // bus's redelivery, the next start), and the reports held for it held again.
      failed = { err };
      open.delete(m.id);
      taken.delete(m.id);
      if (held.length > 0) heldForRecovery.set(m.id, held);
    });
    // Reports held while recovery had not reached it yet follow, in the order they came.
    for (const change of held) inTurn(im, async () => void (failed || (await attemptStatus(open.get(im.id), change))));
    await im.turn;
    if (failed) throw failed.err;
  };

  /** Why an attempt failed, as its report said: from a report held for the message, else from history's events. */
  const failureReason = async (attemptId: string, status: MessageStatus, held: readonly StatusChange[]): Promise<string | undefined> => {
    const said =
      held.findLast((c) => c.messageId === attemptId && c.status === status) ?? (await history.listEvents(attemptId)).findLast((e) => e.status === status);
    return said ? said.detail || said.errorCode || undefined : undefined;
  };

  const resume = async (im: Open, m: Pick<StoredMessage, 'id' | 'applicationId'>, held: readonly StatusChange[] = []): Promise<void> => {
    const plan = im.plan;
    // Attempts already made (a redelivery, a restart): continue from the last one.
    let last = -1;
    let lastRecord: StoredMessage | undefined;
    for (let k = plan.attempts.length - 1; k >= 0 && last < 0; k--) {
      const stored = await history.getMessage(m.applicationId, imAttemptId(m.id, k));
      if (stored) {
        last = k;
        lastRecord = stored;
      }
    }
    if (last < 0 || !lastRecord) return startAttempt(im, 0);
    im.current = last;
    // Hot state may be new (in-process): the attempts overtaken before the restart stay unsent.
    if (last > 0) await state.cancelSends(Array.from({ length: last }, (_, k) => imAttemptId(m.id, k)));
    const attempt = plan.attempts[last]!;
    const status = (await state.getStatus(lastRecord.id))?.status ?? lastRecord.status;
    // An outcome the attempt reached may have been recorded and not told before the stop (core died in between, or
    // its report came while core resumed): told now, before the message settles or falls back on it, under the event
    // id it had or would have had (a receiver drops a repeat). A status short of an outcome is not told again.
    if (reachedEvent(attempt.event, status)) tell(im, status, last);
    else if (isFailure(status)) tell(im, status, last, await failureReason(lastRecord.id, status, held));
    if (reachedEvent(attempt.event, status)) return settle(im, status, `${attempt.channel}: ${status}`);
    if (isFailure(status)) return startAttempt(im, last + 1, status);
    if ((await state.wereCancelled([lastRecord.id]))[0]) return startAttempt(im, last + 1, 'expired'); // timed out just before the stop
    armTimer(im, last, lastRecord.acceptedAt);
    if (stageOf(status) < stageOf('submitted') && lastRecord.destination && !(await publishAttempt(im, last, lastRecord)))
      return startAttempt(im, last + 1, 'rejected');
  };

  // Unsettled messages from before this start, each checked against history: listed now, taken up in the
  // background once this returns (core listens meanwhile; each one took some 25 ms of history lookups in turn,
  // and a thousand kept every gateway answering 503 for half a minute), RECOVERY_CONCURRENCY at a time.
  const since = Date.now() - (deps.recoveryWindowMs ?? 71 * 24 * 3600 * 1000);
  const unsettled = await deps.im.listOpenMessages(since);
  const toRecover = new Set(unsettled.map((m) => m.id));
  /** Every message open at this start: one of them coming on the `im` topic is never new. */
  const openAtStart = new Set(toRecover);
  const recoverOne = (m: (typeof unsettled)[number]): Promise<void> => {
    // Its own status is final only once an outcome was reached (the settled marker may not have followed before the stop).
    const step =
      m.status === 'blocked' || m.status === 'deficient'
        ? endRefused(m, m.status === 'deficient' ? OVER_QUOTA : OPTED_OUT)
        : isFinal(m.status)
          ? settleAgain(m)
          : begin(m);
    return step
      .catch((err) => log.error('could not resume an im message', { err, id: m.id }))
      .finally(() => {
        toRecover.delete(m.id);
        // Reports held for a message that was not taken up after all (refused, settled): as late ones now.
        for (const change of heldForRecovery.get(m.id) ?? []) notOpen(change);
        heldForRecovery.delete(m.id);
      });
  };
  const recovery = (async () => {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (!stopping && next < unsettled.length) await recoverOne(unsettled[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(RECOVERY_CONCURRENCY, unsettled.length) }, lane));
    if (unsettled.length > 0)
      log.info(stopping ? 'resuming im messages stopped with core; the next start goes on' : 'resumed unsettled im messages', {
        count: unsettled.length - toRecover.size,
      });
  })();

  const subscription: Subscription = await bus
    .subscribe(
      topicName('im'),
      async (records) => {
        const jobs = decodeRecords(records, decodeJob, log);
        // A message whose first attempt hot state has never seen is new: no history lookups on the hot path.
        const seen = await Promise.all(jobs.map(({ payload: j }) => state.getStatus(imAttemptId(j.id, 0))));
        for (const [i, { record, payload: job }] of jobs.entries()) {
          // One open before this start (handed over again by recovery.ts, in-process hot state empty) is resumed where it
          // stands, whichever of this and the recovery beside comes first: never begun again (sent twice, its timer reset).
          const fresh = seen[i] === undefined && record.redeliveries === 0 && !openAtStart.has(job.id);
          await begin({ id: job.id, applicationId: job.applicationId, content: job.content }, fresh);
        }
      },
      { group: 'im-orchestrator', maxBatch: 100 },
    )
    .catch(async (err: unknown) => {
      // Core does not start: the recovery begun above stops with it rather than run on with nothing to stop it.
      stopping = true;
      await recovery;
      throw err;
    });

  return {
    statusApplied(change) {
      const refusedAtIntake =
        change.status === 'blocked' || change.status === 'deficient' || (change.status === 'rejected' && change.errorCode === 'body_too_large');
      if (change.channel === 'im' && refusedAtIntake) {
        // Refused at intake (opted out, blocked, over quota, too large for the bus): it never reaches the im topic, so it ends here.
        const id = change.messageId;
        const fresh = deps.recent.get(id);
        (fresh ? Promise.resolve(fresh) : history.getMessage(change.applicationId, id))
          .then((m) => m && endRefused(m, change.detail || OPTED_OUT))
          .catch((err) => log.error('could not settle a refused im message', { err, id }));
        return;
      }
      if (!isImAttemptId(change.messageId) || endedHere.has(change.messageId)) return;
      const { messageId: parent } = parseImAttemptId(change.messageId);
      const im = open.get(parent);
      if (im) inTurn(im, () => attemptStatus(open.get(im.id), change));
      else if (toRecover.has(parent) && !taken.has(parent)) {
        // Not taken up yet by the recovery running beside: applied once it is, not dropped as late.
        const held = heldForRecovery.get(parent);
        if (held) held.push(change);
        else heldForRecovery.set(parent, [change]);
      } else notOpen(change);
    },
    retryAttempt(attemptId, retryAt, deferredSince) {
      const { messageId: parent, attempt: k } = parseImAttemptId(attemptId);
      const im = open.get(parent);
      if (!im || im.current !== k) return;
      clearTimeout(im.retry);
      const again = async (): Promise<void> => {
        // Overtaken meanwhile (its timeout fell back, a failure, the outcome): the worker would drop it as cancelled anyway.
        if (stopping || open.get(im.id) !== im || im.current !== k) return;
        const stored = await history.findMessage(attemptId);
        if (!stored || stageOf((await state.getStatus(attemptId))?.status ?? stored.status) >= stageOf('submitted')) return;
        if (!(await publishAttempt(im, k, stored, deferredSince))) return startAttempt(im, k + 1, 'rejected');
      };
      im.retry = setTimeout(() => inTurn(im, again), Math.min(Math.max(0, retryAt - Date.now()), 2 ** 31 - 1));
      im.retry.unref();
    },
    async stop() {
      stopping = true;
      await subscription.close();
      await recovery;
      for (const im of open.values()) {
        clearTimeout(im.timer);
        clearTimeout(im.retry);
      }
    },
  };
}
