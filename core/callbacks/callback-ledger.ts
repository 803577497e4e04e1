import type { CallbackJob } from './callback-job';
import { FifoMap } from '../../lib/fifo-map';

export type CallbackOutcome = 'delivered' | 'retry' | 'refused' | 'given_up';

/** One try of one callback, as the operator console shows it in a message's journey. */
export interface CallbackTry {
  at: number;
  kind: CallbackJob['kind'];
  /** Without credentials. */
  url: string;
  /** 1 for the first try. */
  attempt: number;
  /** The receiver's HTTP status; 0 when it did not answer. */
  httpStatus: number;
  outcome: CallbackOutcome;
  error: string;
  /** What the callback told: the status it carries, or its kind (a reply). */
  event: string;
}

export interface ApplicationCallbackStats {
  applicationId: string;
  /** Callbacks waiting for their next try. */
  waiting: number;
  delivered: number;
  failedTries: number;
  /** Refused for good, or given up after retrying. */
  failed: number;
  lastError: string;
  lastErrorAt: number;
}

const MAX_MESSAGES = 20_000;
const MAX_TRIES_PER_MESSAGE = 20;

/**
 * What this core's callback dispatcher did, for the admin API: per
 * application, the callbacks waiting and the failures; per message (the most
 * recent 20,000), every try and the receiver's answer.
 */
export function createCallbackLedger(options: { maxMessages?: number } = {}) {
  const maxMessages = options.maxMessages ?? MAX_MESSAGES;
  const applications = new Map<string, ApplicationCallbackStats & { waitingIds: Set<string> }>();
  const tries = new FifoMap<string, CallbackTry[]>();

  const statsOf = (applicationId: string) => {
    let s = applications.get(applicationId);
    if (!s) {
      s = { applicationId, waiting: 0, delivered: 0, failedTries: 0, failed: 0, lastError: '', lastErrorAt: 0, waitingIds: new Set() };
      applications.set(applicationId, s);
    }
    return s;
  };

  return {
    /** One try of `job` ended with `outcome`; `error` is what went wrong ('' when delivered). */
    tried(job: CallbackJob, url: string, outcome: CallbackOutcome, error = '', at = Date.now()): void {
      const s = statsOf(job.applicationId);
      if (outcome === 'delivered') s.delivered++;
      else {
        s.failedTries++;
        s.lastError = error;
        s.lastErrorAt = at;
        if (outcome !== 'retry') s.failed++;
      }
      if (outcome === 'retry') s.waitingIds.add(job.eventId);
      else s.waitingIds.delete(job.eventId);
      s.waiting = s.waitingIds.size;

      const status = outcome === 'delivered' ? null : /answered (\d{3})/.exec(error);
      const entry: CallbackTry = {
        at,
        kind: job.kind,
        url: withoutCredentials(url),
        attempt: job.attempt + 1,
        httpStatus: outcome === 'delivered' ? 200 : status ? Number(status[1]) : 0,
        outcome,
        error,
        event: typeof job.body.status === 'string' ? job.body.status : job.kind,
      };
      const list = tries.get(job.messageId);
      if (list) {
        // Most recent last: a message seen again moves to the back of the eviction order.
        tries.delete(job.messageId);
        list.push(entry);
        if (list.length > MAX_TRIES_PER_MESSAGE) list.shift();
        tries.set(job.messageId, list);
      } else {
        tries.set(job.messageId, [entry]);
        if (tries.size > maxMessages) tries.shift();
      }
    },
    /** Delivered with a 2xx status other than 200: kept exactly. */
    answered(messageId: string, httpStatus: number): void {
      const last = tries.get(messageId)?.at(-1);
      if (last && last.outcome === 'delivered') last.httpStatus = httpStatus;
    },
    triesOf(messageId: string): CallbackTry[] {
      return (tries.get(messageId) ?? []).map((t) => ({ ...t }));
    },
    applications(): ApplicationCallbackStats[] {
      return [...applications.values()].map(({ waitingIds: _, ...s }) => ({ ...s }));
    },
  };
}

export type CallbackLedger = ReturnType<typeof createCallbackLedger>;

// A few receivers get thousands of tries a second: each URL is parsed once.
const shown = new Map<string, string>();

function withoutCredentials(url: string): string {
  const known = shown.get(url);
  if (known !== undefined) return known;
  let text = url;
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    text = u.toString();
  } catch {}
  if (shown.size >= 1000) shown.clear();
  shown.set(url, text);
  return text;
}
