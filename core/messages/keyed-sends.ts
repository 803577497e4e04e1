import { createBatcher } from '../../lib/batcher';
import { HermodError, toHermodError } from '../../lib/errors';
import type { MessageHistory, MessageRecord } from '../ports/message-history';
import type { HotState } from '../ports/state';
import type { RecentMessages } from './recent-messages';

type Result = { ok: true; id: string; numericId: number } | { ok: false; error: HermodError };

export interface KeyedSends {
  /**
   * Stores `records` with `store`, except those marked `keyed` (their id
   * derives from the client's Idempotency-Key) whose id history already
   * holds, or that another call is storing right now: those are answered
   * with the stored message, and nothing is stored or sent for them again.
   * One result per record, in order.
   */
  accept(records: readonly MessageRecord[], keyed: readonly boolean[], store: (records: MessageRecord[]) => Promise<Result[]>): Promise<Result[]>;
}

/**
 * A client whose send was answered 503 or timed out (core died, or the
 * answer was lost) cannot tell whether the message was stored, and retries
 * with the same Idempotency-Key. The gateway releases the key after such a
 * failure, and a crash loses it with core's state, so the retry runs again:
 * what keeps it from storing the message twice is its id, which derives from
 * the key, the request and the application (see `dedup_key` in
 * messages.proto). Before storing a keyed message, intake asks `findStored`
 * whether that id is stored (storedKeyedMessages), and a retry that arrives
 * while the first try is still being stored waits for it.
 */
export function createKeyedSends(findStored: (ids: string[]) => Promise<MessageRecord[]>): KeyedSends {
  /** Keyed ids being looked up or stored now, with their coming answer. */
  const running = new Map<string, Promise<Result>>();

  return {
    async accept(records, keyed, store) {
      const answers: (Result | Promise<Result>)[] = new Array(records.length);
      const own: { i: number; settle: (r: Result) => void }[] = [];
      for (const [i, r] of records.entries()) {
        if (!keyed[i]) continue;
        const already = running.get(r.id);
        if (already) {
          answers[i] = already;
          continue;
        }
        let settle!: (r: Result) => void;
        running.set(
          r.id,
          new Promise<Result>((resolve) => {
            settle = resolve;
          }),
        );
        own.push({ i, settle });
      }
      try {
        if (own.length > 0) {
          let stored: Map<string, MessageRecord>;
          try {
            stored = new Map((await findStored(own.map(({ i }) => records[i]!.id))).map((m) => [m.id, m]));
          } catch (err) {
            // Storing it unchecked could store it twice: the client retries later (503).
            const error = new HermodError('unavailable', `could not tell whether this Idempotency-Key's message is stored: ${toHermodError(err).message}`, {
              retryable: true,
            });
            for (const { i } of own) answers[i] = { ok: false, error };
            stored = new Map();
          }
          for (const { i } of own) {
            const m = stored.get(records[i]!.id);
            if (m) answers[i] = { ok: true, id: m.id, numericId: m.numericId };
          }
        }
        const fresh = records.flatMap((_, i) => (answers[i] === undefined ? [i] : []));
        if (fresh.length > 0) {
          const results = await store(fresh.map((i) => records[i]!));
          for (const [k, i] of fresh.entries()) answers[i] = results[k]!;
        }
      } catch (err) {
        const error = toHermodError(err);
        for (const { i } of own) answers[i] ??= { ok: false, error };
        throw err;
      } finally {
        for (const { i, settle } of own) {
          settle(answers[i] as Result);
          running.delete(records[i]!.id);
        }
      }
      return Promise.all(answers);
    },
  };
}

/** How long after core starts a keyed message hot state does not know is looked for in history too. */
export const KEYED_HISTORY_CHECK_MS = 15 * 60_000;

/**
 * Which of the keyed message ids are stored, as cheaply as each can be told:
 * core's recent messages, then hot state (which holds every message until it
 * ends, and a while after: a minute on Redis, the last 200,000 in memory),
 * and history for the ids hot state knows (for their numbers). History is
 * asked about the others only in the first `historyForMs` after core started:
 * a first try whose answer was lost to a crash was stored by a core that no
 * longer runs, and the retry comes once this one is up. Asking history about
 * every keyed send instead cost about 4 ms of CPU each (a chDB query; keyed
 * v2 sends fell from 456 to 170 a second in the acceptance bench), so outside
 * that window a retry that comes after its first try's message ended and left
 * hot state is stored again (README, "Retry a failed send with its key").
 * History's lookups go one query at a time, the ids asked meanwhile in the next.
 */
export function storedKeyedMessages(deps: {
  history: Pick<MessageHistory, 'findMessages'>;
  state: Pick<HotState, 'getStatus'>;
  recent: Pick<RecentMessages, 'get'>;
  historyForMs: number;
  now?: () => number;
}): (ids: string[]) => Promise<MessageRecord[]> {
  const now = deps.now ?? Date.now;
  const startedAt = now();
  const inHistory = createBatcher<string, MessageRecord | undefined>(
    async (ids) => {
      const found = new Map((await deps.history.findMessages(ids)).map((m) => [m.id, m]));
      return ids.map((id) => found.get(id));
    },
    { maxItems: 1000, maxDelayMs: 0, maxConcurrent: 1 },
  );
  return async (ids) => {
    const found: MessageRecord[] = [];
    const unknown: string[] = [];
    for (const id of ids) {
      const r = deps.recent.get(id);
      if (r) found.push(r);
      else unknown.push(id);
    }
    if (unknown.length === 0) return found;
    const askHistory = now() - startedAt < deps.historyForMs;
    const inHotState = askHistory ? [] : (await Promise.all(unknown.map((id) => deps.state.getStatus(id)))).flatMap((s, i) => (s ? [unknown[i]!] : []));
    const asked = askHistory ? unknown : inHotState;
    const records = await Promise.all(asked.map((id) => inHistory.add(id)));
    for (const m of records) if (m) found.push(m);
    // Hot state has it, history not yet (another core's write on its way): storing it would store it twice.
    if (!askHistory && records.some((m) => !m)) {
      throw new HermodError('unavailable', 'the message of this Idempotency-Key is being stored by another core; retry in a moment', { retryable: true });
    }
    return found;
  };
}
