import type { MessageRecord } from '../ports/message-history';
import { FifoMap } from '../../lib/fifo-map';

/**
 * The messages this core process accepted lately and that are still in
 * flight, so that the callbacks of a message are made in the order its
 * statuses change, and a client polling for what it just sent is answered
 * from memory rather than by a history query.
 *
 * Bounded by design, not by a count: a message leaves `finalTtlMs` after its
 * status is final (finished(), the status recorder tells it), and whatever
 * its status `maxAgeMs` after it was put here. So the cache holds the
 * messages in flight of the last `maxAgeMs` — at a steady rate, the arrival
 * rate × the time a message takes to its final status — and never more than
 * `maxAgeMs` of arrivals (a message finished just before its age runs out
 * stays up to `finalTtlMs` more). What has left is read from history.
 */
export interface RecentMessages {
  put(records: readonly MessageRecord[]): void;
  get(id: string): MessageRecord | undefined;
  getByNumericId(numericId: number): MessageRecord | undefined;
  /** These messages reached a final status: they leave within the final time to live. */
  finished(ids: readonly string[]): void;
  /** Messages held now (after dropping those whose time has passed). */
  readonly size: number;
}

export interface RecentMessagesOptions {
  /** How long a message stays after it was put, final or not (default 2 minutes, HERMOD_RECENT_MESSAGES_MAX_AGE). */
  maxAgeMs?: number;
  /**
   * How long a message stays once its status is final (default 10 s, at most
   * `maxAgeMs`): long enough for the listeners of that status and a client's
   * next poll; history has it by then (it is flushed every 200 ms).
   */
  finalTtlMs?: number;
  /** Clock (tests). */
  now?: () => number;
}

const DEFAULT_MAX_AGE_MS = 2 * 60 * 1000;
const DEFAULT_FINAL_TTL_MS = 10 * 1000;

interface Entry {
  record: MessageRecord;
  expires: number;
}

export function createRecentMessages(options: RecentMessagesOptions = {}): RecentMessages {
  const maxAgeMs = Math.max(1, options.maxAgeMs ?? DEFAULT_MAX_AGE_MS);
  const finalTtlMs = Math.max(1, Math.min(maxAgeMs, options.finalTtlMs ?? DEFAULT_FINAL_TTL_MS));
  const now = options.now ?? Date.now;
  // Two queues, each with one time to live, so each is in expiry order:
  // expiring from the front is O(1) per entry dropped, with no timer, however
  // many finished messages left the in-flight queue from its middle (FifoMap).
  const inFlight = new FifoMap<string, Entry>();
  const done = new FifoMap<string, Entry>();
  const byNumericId = new Map<number, string>();

  const drop = (queue: FifoMap<string, Entry>, id: string, entry: Entry): void => {
    queue.delete(id);
    // A newer record under the same numeric id keeps its mapping.
    if (byNumericId.get(entry.record.numericId) === id) byNumericId.delete(entry.record.numericId);
  };
  const expire = (t: number): void => {
    for (const queue of [inFlight, done]) {
      for (let id = queue.oldestKey(); id !== undefined; id = queue.oldestKey()) {
        const entry = queue.get(id)!;
        if (entry.expires > t) break;
        drop(queue, id, entry);
      }
    }
  };
  const find = (id: string, t: number): MessageRecord | undefined => {
    const entry = inFlight.get(id) ?? done.get(id);
    return entry && entry.expires > t ? entry.record : undefined;
  };

  return {
    put(records) {
      const t = now();
      expire(t);
      for (const r of records) {
        // Put again (read back from history): it starts a new age, at the back of its queue.
        const wasDone = done.get(r.id);
        inFlight.delete(r.id);
        done.delete(r.id);
        if (wasDone) done.set(r.id, { record: r, expires: t + finalTtlMs });
        else inFlight.set(r.id, { record: r, expires: t + maxAgeMs });
        byNumericId.set(r.numericId, r.id);
      }
    },
    get: (id) => find(id, now()),
    getByNumericId(numericId) {
      const id = byNumericId.get(numericId);
      return id === undefined ? undefined : find(id, now());
    },
    finished(ids) {
      const t = now();
      expire(t);
      for (const id of ids) {
        const entry = inFlight.get(id);
        if (!entry) continue;
        inFlight.delete(id);
        entry.expires = t + finalTtlMs;
        done.set(id, entry);
      }
    },
    get size() {
      expire(now());
      return inFlight.size + done.size;
    },
  };
}
