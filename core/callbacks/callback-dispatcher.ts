import type { Bus } from '../ports/bus';
import { topicName, valueBytes } from '../ports/bus';
import type { Accounts } from '../accounts/accounts';
import { toHermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { callbacksTotal } from '../../lib/metrics';
import { createCallbackBacklog } from './callback-backlog';
import { decodeCallback, nextTryAt, type CallbackJob } from './callback-job';
import { startCallbackDeliveryPool } from './callback-delivery-pool';
import { callbackSpan } from './callback-span';
import { activeTraceparent } from '../../lib/tracing';
import type { CallbackOutbox } from './callback-outbox';
import { createCallbackQueues, type TryOutcome } from './callback-queues';
import { createCallbackSettingsCache } from './callback-settings-cache';
import type { CallbackLedger } from './callback-ledger';
import { createCallbackFailureLog } from './callback-failure-log';

export interface CallbackDispatcherOptions {
  bus: Bus;
  accounts: Accounts;
  log: Logger;
  /** Where the callbacks this core owes are kept across restarts; it gives them to this dispatcher as they fit in memory. */
  outbox: CallbackOutbox;
  /** Retries stop this long after the event. */
  retryForMs: number;
  timeoutMs: number;
  /** Allow callback URLs on loopback and private networks (development). */
  allowPrivate: boolean;
  /** Worker threads doing the HTTP of deliveries (0: this thread). */
  threads: number;
  /**
   * The bus keeps published records across a restart (Redis, Kafka): the
   * producer held each job in the outbox only until published, so a job
   * taken from the bus is owed in the outbox before its record is
   * acknowledged. The in-process bus does not: there the producer owes the
   * job in the outbox itself and publishes nothing.
   */
  busKeepsRecords: boolean;
  /** Most messages of one application being tried at once (default 256). */
  maxPerApplication?: number;
  /** Where each try and its answer is noted for the admin API (the operator console). */
  ledger?: CallbackLedger;
}

/**
 * Delivers callback jobs at least once. A job comes from the callbacks topic
 * (or, on the in-process bus, straight from the producer); once it is owed in
 * this core's outbox its record is acknowledged, and when the outbox has it in
 * memory it joins its application's lane (callback-queues), so the topic never
 * waits for a receiver: a receiver that is slow or down holds back only its
 * own application's callbacks. A job that fails waits in process for its next try
 * (exponential backoff, the same event id, up to `retryForMs` after its first
 * try, see nextTryAt), so nothing is published again while it waits. A message's later
 * callbacks queue behind its earlier ones, so the receiver sees them in order.
 * What the outbox owed at start (a crash, a restart) is tried again first.
 */
/** The longest a receiver's callbacks wait for its first answer since the start (which may announce a rate). */
const FIRST_ANSWER_WAIT_MS = 1_000;

export async function startCallbackDispatcher(o: CallbackDispatcherOptions): Promise<{ stop(): Promise<void> }> {
  const pool = await startCallbackDeliveryPool(o.threads, o.log);
  const deliverCallback = pool.deliver;
  const { outbox } = o;

  // A receiver's X-RateLimit-Limit (requests per second) paces what this dispatcher sends it.
  const rateLimits = new Map<string, number>();
  /**
   * Receivers answered since this core started (or waited for long enough).
   * Until a receiver has answered once, its callbacks wait for the first
   * one's answer, which says whether it announces a rate: a burst right after
   * a start (the outbox's owed callbacks, a campaign's first receipts) would
   * otherwise go out unpaced.
   */
  const answered = new Set<string>();
  const firstAnswers = new Map<string, Promise<void>>();
  /**
   * Resolves once `receiver` has answered since the start, or once its first
   * answer has been waited for FIRST_ANSWER_WAIT_MS (a receiver slow to answer,
   * or hanging, must not hold its callbacks up to the callback timeout: they go
   * then, unpaced until an answer says otherwise); undefined, or, for the
   * caller who is to send the first request, what to call after it.
   */
  const untilAnswered = async (receiver: string): Promise<(() => void) | undefined> => {
    if (answered.has(receiver)) return undefined;
    const first = firstAnswers.get(receiver);
    if (first) {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<'waited'>((resolve) => {
        timer = setTimeout(() => resolve('waited'), FIRST_ANSWER_WAIT_MS);
        timer.unref();
      });
      if ((await Promise.race([first, waited])) === 'waited') answered.add(receiver);
      clearTimeout(timer);
      return undefined;
    }
    let heard!: () => void;
    firstAnswers.set(receiver, new Promise<void>((resolve) => (heard = resolve)));
    return () => {
      answered.add(receiver);
      firstAnswers.delete(receiver);
      heard();
    };
  };
  const nextSlot = new Map<string, number>();
  const pace = async (receiver: string): Promise<void> => {
    const limit = rateLimits.get(receiver);
    if (!limit || limit <= 0) return;
    const now = Date.now();
    const slot = Math.max(now, nextSlot.get(receiver) ?? 0);
    nextSlot.set(receiver, slot + 1000 / limit);
    if (slot > now) await new Promise((r) => setTimeout(r, slot - now));
  };

  // Why tries fail, in the log (rate-limited per application and receiver); the HTTP may run on a delivery thread, the outcome comes back here.
  const failures = createCallbackFailureLog(o.log);
  // A refusal repeats for every callback to that URL (thousands a second): said as seldom as failures.
  const refusals = createCallbackFailureLog(o.log, { line: 'callback refused', counted: 'refused' });

  const settingsOf = createCallbackSettingsCache((applicationId) => o.accounts.callbackSettings(applicationId));
  o.accounts.onSettingsChanged((applicationId) => settingsOf.forget(applicationId));

  /** Tries one job once. */
  const tryJob = async (job: CallbackJob): Promise<TryOutcome> => {
    // Its retry window starts now if it waited behind its message's earlier callbacks (carried on by its retries);
    // a retry owed since before this release came with no first try noted: its window is from its event, as then.
    job.firstTriedAt ??= job.attempt > 0 ? job.createdAt : Date.now();
    const settings = await settingsOf.get(job.applicationId);
    const url = job.kind === 'status' ? settings?.statusCallbackUrl : job.kind === 'reply' ? settings?.replyCallbackUrl : settings?.imStatusCallbackUrl;
    if (!settings || !url) {
      callbacksTotal.inc({ application: job.applicationId, kind: job.kind, outcome: 'not_configured' });
      return { done: true };
    }
    const heard = answered.has(url) ? undefined : await untilAnswered(url);
    try {
      if (rateLimits.size > 0) await pace(url);
      const sentAt = Date.now();
      const answer = await callbackSpan(job, () =>
        deliverCallback({
          url,
          secret: settings.callbackSecret,
          // An operator's rotation with an overlap: the secret replaced signs beside it until then.
          ...(settings.previousCallbackSecretUntil > Date.now() ? { previousSecret: settings.previousCallbackSecret } : {}),
          eventId: job.eventId,
          eventAt: job.createdAt,
          body: JSON.stringify(job.body),
          timeoutMs: o.timeoutMs,
          allowPrivate: o.allowPrivate,
          traceparent: activeTraceparent(),
        }),
      );
      if (answer.rateLimit !== undefined) {
        // The first answer's rate counts from the first request: the next slot is one interval after it was sent.
        if (heard && answer.rateLimit > 0) nextSlot.set(url, Math.max(nextSlot.get(url) ?? 0, sentAt + 1000 / answer.rateLimit));
        rateLimits.set(url, answer.rateLimit);
      } else if (rateLimits.delete(url)) {
        // An answer without the header announces no limit (SPEC: each callback's 200 carries it): the limit was lifted.
        nextSlot.delete(url);
      }
      heard?.();
      callbacksTotal.inc({ application: job.applicationId, kind: job.kind, outcome: 'delivered' });
      failures.delivered(job.applicationId, url);
      o.ledger?.tried(job, url, 'delivered');
      o.ledger?.answered(job.messageId, answer.status);
      return { done: true, delivered: true };
    } catch (err) {
      // A failure tells no rate either: the others go on (and, a receiver that is down, fail on their own).
      heard?.();
      const e = toHermodError(err);
      if (!e.retryable) {
        refusals.failed(job.applicationId, url, e.message);
        callbacksTotal.inc({ application: job.applicationId, kind: job.kind, outcome: 'refused' });
        o.ledger?.tried(job, url, 'refused', e.message);
        return { done: true };
      }
      failures.failed(job.applicationId, url, e.message);
      const retryAt = nextTryAt(job, o.retryForMs, Date.now(), e.retryAfterSeconds);
      if (retryAt === undefined) {
        o.log.warn('callback given up after retrying', { application: job.applicationId, eventId: job.eventId, attempts: job.attempt + 1, reason: e.message });
        callbacksTotal.inc({ application: job.applicationId, kind: job.kind, outcome: 'given_up' });
        o.ledger?.tried(job, url, 'given_up', e.message);
        return { done: true, gaveUp: true };
      }
      callbacksTotal.inc({ application: job.applicationId, kind: job.kind, outcome: 'retry' });
      o.ledger?.tried(job, url, 'retry', e.message);
      return { done: false, retryAt, ...(e.retryAfterSeconds !== undefined ? { askedUntil: Date.now() + e.retryAfterSeconds * 1000 } : {}) };
    }
  };

  // Callbacks in memory waiting for a retry, per application (hermod_callbacks_awaiting_retry).
  const backlog = createCallbackBacklog(o.retryForMs);
  // Jobs finished in one turn (the answers of one batch from a delivery thread) are settled in one journal write.
  let settled: string[] = [];
  // Until then they are still in the outbox's memory: not to be moved to disk, which would owe them again.
  const settling = new Set<string>();
  const settleFinished = (): void => {
    const ids = settled;
    settled = [];
    settling.clear();
    try {
      outbox.settle(ids);
    } catch (err) {
      // Still owed in the outbox: delivered again after a restart, at least once as promised.
      o.log.error('could not settle callbacks in the outbox', { err, jobs: ids.length });
    }
  };
  const queues = createCallbackQueues({
    tryJob,
    onDone: (job) => {
      backlog.done(job);
      if (settled.length === 0) queueMicrotask(settleFinished);
      settled.push(job.eventId);
      settling.add(job.eventId);
    },
    onRescheduled: (job) => {
      backlog.waiting(job);
      outbox.retry(job);
    },
    onSuperseded: (job) => {
      o.log.warn('callback given up untried: a later status of its message waits behind it', { application: job.applicationId, eventId: job.eventId });
      callbacksTotal.inc({ application: job.applicationId, kind: job.kind, outcome: 'given_up' });
    },
    maxPerApplication: o.maxPerApplication,
  });

  // What was in memory when this core last stopped or crashed is given first; the rest as it fits.
  outbox.attach({
    add(job) {
      if (job.attempt > 0) backlog.waiting(job);
      queues.add(job);
    },
    canRemove: (job) => !settling.has(job.eventId) && queues.canRemove(job),
    remove(job) {
      queues.remove(job);
      backlog.done(job);
    },
  });

  const subscription = o.busKeepsRecords
    ? await o.bus.subscribe(
        topicName('callbacks'),
        // On disk before the records are acknowledged; the outbox gives them to the queues as they fit in memory.
        async (records) => outbox.owe(records.map((r) => decodeCallback(valueBytes(r.value)))),
        { group: 'callback-senders', maxBatch: 256 },
      )
    : undefined;

  return {
    async stop() {
      await subscription?.close();
      await queues.stop();
      await pool.stop();
    },
  };
}
