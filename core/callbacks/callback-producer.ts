import { hashedUuid, uuid } from '../../lib/uuid';
import type { Bus } from '../ports/bus';
import { topicName } from '../ports/bus';
import { publishInParts } from '../ports/publish-in-parts';
import type { MessageRecord } from '../ports/message-history';
import type { BatchedMessageLookup } from '../messages/batched-message-lookup';
import type { RecentMessages } from '../messages/recent-messages';
import type { StatusChange } from '../messages/status-recorder';
import { createVoidBatcher } from '../../lib/void-batcher';
import { retryUntilDone } from '../../lib/retry-until-done';
import type { Logger } from '../../lib/log';
import { isCampaignMessageId } from '../campaigns/campaign-message-ids';
import { isImAttemptId } from '../im/im-ids';
import { clientReplyTo } from '../messages/client-reply-to';
import { imCallbackBody, type ImStatusNotice } from '../im/im-status-notice';
import { callbackOrderKey, encodeCallback, type CallbackJob } from './callback-job';
import type { CallbackOutbox } from './callback-outbox';
import type { OwedLookup } from './callback-outbox-format';
import { traceOf } from '../../lib/tracing';
import { rateLimitedWarning } from '../../lib/rate-limited-warning';
import type { BusPosition } from '../ports/bus';

interface CallbackProducerDeps {
  bus: Bus;
  /** Where a message no longer among the recent ones is found (many lookups to a history query). */
  lookup: Pick<BatchedMessageLookup, 'find'>;
  recent: RecentMessages;
  log: Logger;
  outbox: CallbackOutbox;
  /**
   * The bus keeps published records across a restart of this core (Redis,
   * Kafka): a job is held in the outbox until published. The in-process bus
   * does not, so there the job is owed in the outbox (which gives it to this
   * core's dispatcher) and nothing is published.
   */
  busKeepsRecords: boolean;
  /** First wait before a failed history lookup is tried again; doubles per failure up to a minute (default 1 s). */
  lookupRetryMs?: number;
  /** How often the consumers' group is asked what it acknowledged, while jobs are kept for it (default 1 s). */
  acknowledgedEveryMs?: number;
}

/** The group whose members owe a callback in their outbox once they acknowledge its record (callback-dispatcher.ts). */
const CALLBACK_SENDERS = 'callback-senders';

const MAX_LOOKUP_RETRY_MS = 60_000;

/** Interfaces whose messages have no status callbacks: Gateway v1, and Campaign Manager's answers to replies (its campaign messages are told apart by id). */
const NO_STATUS_CALLBACKS = new Set(['gateway_v1', 'campaign_opt_out_response', 'campaign_reply_response', 'campaign']);

/**
 * Turns status changes of outgoing messages and incoming replies into
 * callback jobs on the callbacks topic, keyed by message so one message's
 * callbacks stay in the order the changes happened. Each job is written to
 * the outbox first, so a crash between a change and its callback loses
 * nothing.
 *
 * On a bus that can lose what it took (Redis without persistence, back
 * empty), a published job stays in the outbox at its position until the
 * callback senders' group has acknowledged it (then a dispatcher's outbox
 * owes it), asked every second while any is kept. One the bus lost (its
 * position is of an epoch before the bus' current one, or `busLost` says so)
 * is published again, with its event id: a dispatcher that had it already
 * drops the repeat of an event it settled, and otherwise the receiver may
 * hear it twice (at least once), or after a later callback of its message.
 */
export function createCallbackProducer(deps: CallbackProducerDeps) {
  const { outbox } = deps;
  const tracked = deps.busKeepsRecords ? deps.bus.tracked : undefined;
  const topic = topicName('callbacks');
  // One batch at a time, each tried again until the bus takes it (a broker
  // away, electing a leader): a later batch never overtakes an earlier one,
  // so a message's callbacks keep the order of its changes. At a stop the
  // jobs still refused stay held in the outbox, published at the next start.
  const publisher = createVoidBatcher<CallbackJob>(
    async (jobs) => {
      const records = jobs.map((j) => ({ key: callbackOrderKey(j), value: encodeCallback(j) }));
      let positions: BusPosition[] | undefined;
      // A refusal that will not pass (too large, not allowed) is not tried forever: the jobs stay held for the next start.
      await retryUntilDone(
        async () => {
          if (tracked) positions = await tracked.publish(topic, records);
          else await publishInParts(deps.bus, topic, records);
        },
        { what: 'publish callbacks', log: deps.log, fields: { jobs: jobs.length }, giveUp: () => draining },
      );
      outbox.handOver(jobs, positions);
      if (positions) askAcknowledged();
    },
    { maxItems: 2000, maxDelayMs: 0, maxConcurrent: 1 },
  );

  // Jobs made in one synchronous run (the listeners of one recorded batch) go
  // to the outbox in one write, in a microtask queued before the recorder's
  // own promise settles: the job is on disk before the status that caused it
  // is acknowledged on the bus. So are the changes whose message must first be
  // looked up in history (`awaiting`), until their lookup ends (`ended`).
  let made: CallbackJob[] = [];
  let awaiting: OwedLookup[] = [];
  let ended: string[] = [];
  const writeMade = (): void => {
    const jobs = made;
    const waits = awaiting;
    const done = ended;
    made = [];
    awaiting = [];
    ended = [];
    try {
      outbox.awaitLookups(waits);
    } catch (err) {
      deps.log.error('could not keep status changes waiting for a lookup in the outbox', { err, changes: waits.length });
    }
    // A lookup is marked ended only once the job it made is written: else the next start looks it up again.
    let jobsWritten = true;
    if (jobs.length === 0) {
      // Nothing made: only lookups waiting or ended.
    } else if (!deps.busKeepsRecords) {
      try {
        outbox.owe(jobs);
      } catch (err) {
        jobsWritten = false;
        deps.log.error('could not write callbacks to the outbox', { err, jobs: jobs.length });
      }
    } else {
      try {
        outbox.hold(jobs);
      } catch (err) {
        jobsWritten = false;
        deps.log.error('could not write callbacks to the outbox; publishing them anyway', { err, jobs: jobs.length });
      }
      for (const job of jobs) publisher.add(job).catch((err) => deps.log.error('could not queue a callback', { err, messageId: job.messageId }));
    }
    // After the jobs they made: a crash in between gives the lookup again, and its job the same event id.
    if (!jobsWritten || done.length === 0) return;
    try {
      outbox.lookedUp(done);
    } catch (err) {
      deps.log.error('could not mark lookups ended in the outbox', { err, lookups: done.length });
    }
  };
  const toWrite = (): void => {
    if (made.length === 0 && awaiting.length === 0 && ended.length === 0) queueMicrotask(writeMade);
  };
  const enqueue = (job: Omit<CallbackJob, 'eventId' | 'attempt' | 'notBefore'>, eventId: string = uuid()): void => {
    toWrite();
    // Built field by field (one shape for every job), not spread: thousands a second.
    const job1: CallbackJob = {
      eventId,
      applicationId: job.applicationId,
      kind: job.kind,
      messageId: job.messageId,
      body: job.body,
      createdAt: job.createdAt,
      attempt: 0,
      notBefore: 0,
    };
    if (job.trace !== undefined) job1.trace = job.trace;
    made.push(job1);
  };
  /**
   * An IM status is told once per message, attempt and status (each only moves forward), and may be told again
   * after a crash (the orchestrator tells a resumed attempt where it stands): the same event id every time, so a
   * receiver can tell the repeat. The message's `accepted` keeps the id every status callback's `accepted` has.
   */
  const imEventIdOf = (n: ImStatusNotice): string =>
    n.attempt ? hashedUuid('callback', n.messageId, 'attempt', String(n.attempt.number), n.status) : hashedUuid('callback', n.messageId, n.status);
  const imStatusJob = (n: ImStatusNotice, eventId?: string): void =>
    enqueue({ applicationId: n.applicationId, kind: 'im_status', messageId: n.messageId, body: imCallbackBody(n), createdAt: n.at }, eventId ?? imEventIdOf(n));
  /** `accepted` is told again after a crash that may have come before or after it was told (recovery.ts): the same id both times. */
  const eventIdOf = (c: StatusChange): string => (c.status === 'accepted' ? hashedUuid('callback', c.messageId, 'accepted') : uuid());
  const statusJob = (m: MessageRecord, c: StatusChange, given?: string): void => {
    // SMS Gateway v2 and Intelligent Messaging have status callbacks; Gateway v1 and Campaign Manager none (SPEC.md §6.3).
    if (m.direction !== 'MT' || NO_STATUS_CALLBACKS.has(m.via)) return;
    const eventId = given ?? eventIdOf(c);
    if (m.channel === 'im') {
      // Intelligent Messaging: `accepted` is told here; the IM orchestrator tells the rest (imStatus below).
      if (c.status !== 'accepted') return;
      return imStatusJob({ applicationId: m.applicationId, messageId: m.id, status: 'accepted', reference: m.reference, at: c.at }, eventId);
    }
    enqueue(
      {
        applicationId: m.applicationId,
        kind: 'status',
        messageId: m.id,
        body: { id: m.id, message_id: m.id, status: c.status, detail: m.destination, ...(m.reference ? { reference: m.reference } : {}) },
        createdAt: c.at,
        trace: traceOf(c),
      },
      eventId,
    );
  };
  /**
   * Looks the change's message up in history, then makes its job with the
   * event id kept in the outbox for it. Lookups sharing a query are answered
   * in the order made; across queries, order among these late ones is best effort.
   * A lookup that failed (history busy or away) is tried again, waiting longer
   * each time; once the producer drains, it is left in the outbox for the next start.
   */
  const lookupRetryMs = deps.lookupRetryMs ?? 1000;
  let draining = false;
  const retries = new Set<NodeJS.Timeout>();
  const lookUp = (owed: OwedLookup, failures = 0): void => {
    const { eventId, change } = owed;
    void deps.lookup.find(change.messageId).then(
      (stored) => {
        if (stored) statusJob(stored, change, eventId);
        toWrite();
        ended.push(eventId);
      },
      (err) => {
        const retryInMs = Math.min(MAX_LOOKUP_RETRY_MS, lookupRetryMs * 2 ** Math.min(failures, 10));
        deps.log.warn('no callback yet: message lookup failed', { err, messageId: change.messageId, ...(draining ? {} : { retryInMs }) });
        if (draining) return;
        const retry = setTimeout(() => {
          retries.delete(retry);
          lookUp(owed, failures + 1);
        }, retryInMs);
        retry.unref();
        retries.add(retry);
      },
    );
  };

  /** Jobs kept for the callback senders' group (published before the last stop too) are dropped once it has them. */
  const acknowledgedEveryMs = deps.acknowledgedEveryMs ?? 1000;
  let askTimer: NodeJS.Timeout | undefined;
  const cannotAsk = rateLimitedWarning(deps.log, 'could not ask the bus which callbacks were taken; asking again', { count: 'failures' });
  const askAcknowledged = (): void => {
    if (!tracked || askTimer || draining) return;
    askTimer = setTimeout(() => void checkAcknowledged(tracked), acknowledgedEveryMs);
    askTimer.unref();
  };
  const checkAcknowledged = async (bus: NonNullable<typeof tracked>): Promise<void> => {
    try {
      const asked = new Map(outbox.unacknowledged().map((k) => [k.job.eventId, k.position]));
      if (asked.size === 0) return;
      const acks = await bus.acknowledged(topic, CALLBACK_SENDERS);
      if (draining) return;
      outbox.acknowledged(acks);
      // Of another epoch: the bus lost them (a Redis back empty). Only those kept as they were when asked: one
      // published again meanwhile has a new position, which this answer may not know.
      const lost = outbox
        .unacknowledged()
        .filter((k) => asked.get(k.job.eventId) === k.position && k.position.epoch !== acks.epoch)
        .map((k) => k.job);
      if (lost.length > 0) {
        deps.log.warn('callbacks published on the bus were lost with it before a core took them; publishing them again', { jobs: lost.length });
        publishAgain(lost);
      }
    } catch (err) {
      cannotAsk({ err });
    } finally {
      askTimer = undefined;
      if (outbox.unacknowledged().length > 0) askAcknowledged();
    }
  };
  /** Held again, so a crash before they are published again leaves them owed by this core, as any held job. */
  const publishAgain = (jobs: CallbackJob[]): void => {
    try {
      outbox.hold(jobs);
    } catch (err) {
      deps.log.error('could not write callbacks to the outbox; publishing them anyway', { err, jobs: jobs.length });
    }
    for (const job of jobs) publisher.add(job).catch((err) => deps.log.error('could not queue a callback', { err, messageId: job.messageId }));
  };
  askAcknowledged();

  // Changes that were waiting for a lookup when this core last stopped.
  const resumed = outbox.lookups();
  if (resumed.length > 0) deps.log.info('looking up messages for callbacks owed from before the restart', { changes: resumed.length });
  for (const l of resumed) lookUp(l);

  return {
    /** Status changes, in the order they were applied. */
    statusChanged(change: StatusChange): void {
      // Campaign Manager sends no callbacks (SPEC.md §6.3); its report is the way to follow a campaign.
      if (isCampaignMessageId(change.messageId)) return;
      // An IM delivery attempt: the message it belongs to reports for it.
      if (isImAttemptId(change.messageId)) return;
      const m = deps.recent.get(change.messageId);
      if (m) return statusJob(m, change);
      // Not in memory (an old message, or one another core accepted): kept in the outbox, then looked up.
      const lookup = { eventId: eventIdOf(change), change };
      toWrite();
      awaiting.push(lookup);
      lookUp(lookup);
    },
    /** `knownAs`: the integer id of an answered message whose client knows it by one (Gateway v1, campaigns), by UUID. */
    repliesReceived(replies: readonly MessageRecord[], knownAs: ReadonlyMap<string, number> = new Map()): void {
      for (const r of replies) {
        if (!r.applicationId) continue;
        // A reply to an IM delivery attempt answers the IM message: its id is the one the client was given.
        const replyTo = clientReplyTo(r.replyTo, knownAs);
        enqueue({
          applicationId: r.applicationId,
          kind: 'reply',
          messageId: r.id,
          body: {
            id: r.id,
            source: r.source,
            destination: r.destination,
            content: r.content,
            operator: '',
            ...(replyTo !== undefined ? { reply_to: replyTo } : {}),
          },
          createdAt: r.acceptedAt,
        });
      }
    },
    /** What the IM orchestrator tells about a message or one of its attempts. */
    imStatus: (n: ImStatusNotice): void => imStatusJob(n),
    /**
     * The bus lost what it held (a Redis back empty, found by hot state's loss watch): every job published and
     * not yet acknowledged is published again, and how many.
     */
    busLost(): number {
      if (!tracked || draining) return 0;
      const jobs = outbox.unacknowledged().map((k) => k.job);
      if (jobs.length === 0) return 0;
      deps.log.warn('callbacks published on the bus and not yet taken may be lost with it; publishing them again', { jobs: jobs.length });
      publishAgain(jobs);
      return jobs.length;
    },
    drain: async () => {
      draining = true;
      if (askTimer) clearTimeout(askTimer);
      askTimer = undefined;
      // Lookups still to be tried again stay in the outbox for the next start.
      for (const retry of retries) clearTimeout(retry);
      retries.clear();
      // Jobs made in this very turn are still in `made` until their microtask runs.
      await Promise.resolve();
      await publisher.drain();
    },
  };
}
