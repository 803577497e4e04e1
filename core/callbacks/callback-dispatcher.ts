import type { Bus, DeliveredRecord } from '../ports/bus';
import { topicName } from '../ports/bus';
import type { Accounts } from '../accounts/accounts';
import { toHermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { callbacksTotal } from '../../lib/metrics';
import { createCallbackBacklog } from './callback-backlog';
import { decodeCallback, encodeCallback, retryDelayMs, type CallbackJob } from './callback-job';
import { startCallbackDeliveryPool } from './callback-delivery-pool';

export interface CallbackDispatcherOptions {
  bus: Bus;
  accounts: Accounts;
  log: Logger;
  /** Retries stop this long after the event. */
  retryForMs: number;
  timeoutMs: number;
  /** Allow callback URLs on loopback and private networks (development). */
  allowPrivate: boolean;
  /** Worker threads doing the HTTP of deliveries (0: this thread). */
  threads: number;
}

/** Longest a retry handler waits in place before it puts a not-yet-due job back on the retry topic. */
const MAX_HOLD_MS = 2000;

/**
 * Delivers callback jobs at least once. A failed delivery goes to the retry
 * topic with the same event id and a growing delay (up to `retryForMs` after
 * the event); while a message has a retry pending, its later callbacks queue
 * behind it so the receiver still sees them in order.
 */
export async function startCallbackDispatcher(o: CallbackDispatcherOptions): Promise<{ stop(): Promise<void> }> {
  const pool = await startCallbackDeliveryPool(o.threads, o.log);
  const deliverCallback = pool.deliver;
  const pendingRetries = new Map<string, number>();
  const held = (id: string, delta: number): void => {
    const n = (pendingRetries.get(id) ?? 0) + delta;
    if (n <= 0) pendingRetries.delete(id);
    else pendingRetries.set(id, n);
  };
  const toRetry = async (job: CallbackJob, attempt: number, notBefore: number): Promise<void> => {
    await o.bus.publish(topicName('callbacks-retry'), [{ key: job.messageId, value: encodeCallback({ ...job, attempt, notBefore }) }]);
  };

  // A receiver's X-RateLimit-Limit (requests per second) paces what this dispatcher sends it.
  const rateLimits = new Map<string, number>();
  const nextSlot = new Map<string, number>();
  const pace = async (receiver: string): Promise<void> => {
    const limit = rateLimits.get(receiver);
    if (!limit || limit <= 0) return;
    const now = Date.now();
    const slot = Math.max(now, nextSlot.get(receiver) ?? 0);
    nextSlot.set(receiver, slot + 1000 / limit);
    if (slot > now) await new Promise((r) => setTimeout(r, slot - now));
  };

  const backlog = createCallbackBacklog(o.retryForMs);
  /** Tries one job; returns whether it is finished (delivered, refused or given up). */
  const attempt = async (job: CallbackJob): Promise<boolean> => {
    const finished = await tryOnce(job);
    if (finished) backlog.done(job);
    else backlog.waiting(job);
    return finished;
  };
  const tryOnce = async (job: CallbackJob): Promise<boolean> => {
    const settings = await o.accounts.callbackSettings(job.applicationId);
    const url = job.kind === 'status' ? settings?.statusCallbackUrl : job.kind === 'reply' ? settings?.replyCallbackUrl : settings?.imStatusCallbackUrl;
    if (!settings || !url) {
      callbacksTotal.inc({ application: job.applicationId, kind: job.kind, outcome: 'not_configured' });
      return true;
    }
    try {
      await pace(url);
      const answer = await deliverCallback({ url, secret: settings.callbackSecret, eventId: job.eventId, body: JSON.stringify(job.body), timeoutMs: o.timeoutMs, allowPrivate: o.allowPrivate });
      if (answer.rateLimit !== undefined) rateLimits.set(url, answer.rateLimit);
      callbacksTotal.inc({ application: job.applicationId, kind: job.kind, outcome: 'delivered' });
      return true;
    } catch (err) {
      const e = toHermodError(err);
      if (!e.retryable) {
        o.log.warn('callback refused', { application: job.applicationId, kind: job.kind, reason: e.message });
        callbacksTotal.inc({ application: job.applicationId, kind: job.kind, outcome: 'refused' });
        return true;
      }
      const delay = retryDelayMs(job.attempt);
      if (Date.now() + delay > job.createdAt + o.retryForMs) {
        o.log.warn('callback given up after retrying', { application: job.applicationId, eventId: job.eventId, attempts: job.attempt + 1 });
        callbacksTotal.inc({ application: job.applicationId, kind: job.kind, outcome: 'given_up' });
        return true;
      }
      callbacksTotal.inc({ application: job.applicationId, kind: job.kind, outcome: 'retry' });
      await toRetry(job, job.attempt + 1, Date.now() + delay);
      return false;
    }
  };

  const byMessage = (records: DeliveredRecord[]): CallbackJob[][] => {
    const groups = new Map<string, CallbackJob[]>();
    for (const r of records) {
      const job = decodeCallback(r.value);
      const list = groups.get(job.messageId) ?? [];
      list.push(job);
      groups.set(job.messageId, list);
    }
    return [...groups.values()];
  };

  const first = await o.bus.subscribe(
    topicName('callbacks'),
    async (records) => {
      await Promise.all(
        byMessage(records).map(async (jobs) => {
          for (const job of jobs) {
            if (pendingRetries.has(job.messageId)) {
              // Keep order behind the message's pending retry.
              held(job.messageId, 1);
              backlog.waiting(job);
              await toRetry(job, job.attempt, Date.now());
              continue;
            }
            if (!(await attempt(job))) held(job.messageId, 1);
          }
        }),
      );
    },
    { group: 'callback-senders', maxBatch: 256 },
  );

  // The retry that must go first for a message; its later callbacks go back behind it.
  const blockedBy = new Map<string, string>();
  const retries = await o.bus.subscribe(
    topicName('callbacks-retry'),
    async (records) => {
      for (const jobs of byMessage(records)) {
        for (const job of jobs) {
          const blocker = blockedBy.get(job.messageId);
          if (blocker && blocker !== job.eventId) {
            await toRetry(job, job.attempt, job.notBefore);
            continue;
          }
          const wait = job.notBefore - Date.now();
          if (wait > MAX_HOLD_MS) {
            await new Promise((r) => setTimeout(r, MAX_HOLD_MS));
            blockedBy.set(job.messageId, job.eventId);
            await toRetry(job, job.attempt, job.notBefore);
            continue;
          }
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          if (await attempt(job)) {
            held(job.messageId, -1);
            if (blockedBy.get(job.messageId) === job.eventId) blockedBy.delete(job.messageId);
          } else {
            blockedBy.set(job.messageId, job.eventId);
          }
        }
      }
    },
    { group: 'callback-retries', maxBatch: 64 },
  );

  return {
    async stop() {
      await first.close();
      await retries.close();
      await pool.stop();
    },
  };
}
