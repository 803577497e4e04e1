import type { MessageHistory, MessageRecord } from '../ports/message-history';
import type { Logger } from '../../lib/log';

/** Finds messages by id in history, many lookups to a query. */
export interface BatchedMessageLookup {
  /** The message, or undefined once history has not had it at any try (or could not be asked). */
  find(id: string): Promise<MessageRecord | undefined>;
  /** Lookups not answered yet (waiting for a query or for a later try). */
  readonly pending: number;
}

export interface BatchedMessageLookupOptions {
  history: Pick<MessageHistory, 'findMessages'>;
  log: Logger;
  /**
   * When to look again for an id history did not have, counted from the
   * first try: a message accepted by another core is in history only after
   * that core's next flush. Default: none.
   */
  retryDelaysMs?: readonly number[];
  /** Most ids in one query (default 5,000). */
  maxBatch?: number;
}

interface Waiting {
  resolve: (m: MessageRecord | undefined) => void;
  /** Which try comes next (0: the first). */
  tries: number;
  firstAt: number;
}

/**
 * Lookups of messages no longer in memory (a late receipt, a status change
 * for a message another core accepted) are gathered and asked of history in
 * one query at a time: while one query runs, the ids asked for meanwhile wait
 * for the next. A thousand late receipts cost one query, not a thousand, one
 * after the other in the engine. Lookups of the same id share one answer, and
 * answers come in the order the lookups were made when they share a query.
 */
export function createBatchedMessageLookup(options: BatchedMessageLookupOptions): BatchedMessageLookup {
  const { history, log } = options;
  const retryDelaysMs = options.retryDelaysMs ?? [];
  const maxBatch = options.maxBatch ?? 5000;
  /** Ids to ask for in the next query, in the order asked. */
  let queued = new Map<string, Waiting[]>();
  let querying = false;
  let pending = 0;

  const settle = (waiting: readonly Waiting[], found: MessageRecord | undefined): void => {
    pending -= waiting.length;
    for (const w of waiting) w.resolve(found);
  };

  const enqueue = (id: string, waiting: Waiting[]): void => {
    const already = queued.get(id);
    if (already) already.push(...waiting);
    else queued.set(id, waiting);
    if (!querying) queueMicrotask(run);
  };

  const run = async (): Promise<void> => {
    if (querying || queued.size === 0) return;
    querying = true;
    let batch: Map<string, Waiting[]>;
    if (queued.size <= maxBatch) {
      batch = queued;
      queued = new Map();
    } else {
      batch = new Map();
      for (const [id, waiting] of queued) {
        if (batch.size === maxBatch) break;
        batch.set(id, waiting);
        queued.delete(id);
      }
    }
    try {
      const found = new Map((await history.findMessages([...batch.keys()])).map((m) => [m.id, m]));
      for (const [id, waiting] of batch) {
        const m = found.get(id);
        if (m) {
          settle(waiting, m);
          continue;
        }
        for (const w of waiting) {
          const delay = retryDelaysMs[w.tries];
          if (delay === undefined) {
            settle([w], undefined);
            continue;
          }
          w.tries++;
          setTimeout(() => enqueue(id, [w]), Math.max(0, w.firstAt + delay - Date.now())).unref();
        }
      }
    } catch (err) {
      log.warn('message lookup failed', { err, ids: batch.size });
      for (const waiting of batch.values()) settle(waiting, undefined);
    } finally {
      querying = false;
      if (queued.size > 0) queueMicrotask(run);
    }
  };

  return {
    find(id) {
      pending++;
      return new Promise((resolve) => enqueue(id, [{ resolve, tries: 0, firstAt: Date.now() }]));
    },
    get pending() {
      return pending;
    },
  };
}
