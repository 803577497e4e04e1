import { createBatcher } from '../../lib/batcher';
import { HermodError, toHermodError } from '../../lib/errors';
import type { MessageHistory, MessageRecord } from '../ports/message-history';
import type { HotState } from '../ports/state';
import type { RecentMessages } from './recent-messages';
import type { Logger } from '../../lib/log';

/** `replayed`: a keyed message stored before this call (its first try's), of which nothing was stored now. */
type Result = { ok: true; id: string; numericId: number; replayed?: boolean } | { ok: false; error: HermodError };

/** A first try's answer, as the answer to a retry of it. */
const asReplay = (r: Result): Result => (r.ok ? { ...r, replayed: true } : r);

export interface KeyedSends {
  /**
   * Stores `records` with `store`, except those marked `keyed` (their id
   * derives from the client's Idempotency-Key) whose id history already
   * holds, or that another call is storing right now: those are answered
   * with the stored message, marked `replayed`, and nothing is stored or
   * sent for them again.
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
export function createKeyedSends(findStored: (ids: string[]) => Promise<Pick<MessageRecord, 'id' | 'numericId'>[]>): KeyedSends {
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
          answers[i] = already.then(asReplay);
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
          let stored: Map<string, Pick<MessageRecord, 'id' | 'numericId'>>;
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
            if (m) answers[i] = { ok: true, id: m.id, numericId: m.numericId, replayed: true };
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

/** How long before and after core starts the keyed messages stored before it started are looked for (a crash's first tries). */
export const KEYED_HISTORY_CHECK_MS = 15 * 60_000;

/** Most keyed messages of the window before a start kept in memory; past that, the rest are asked of history. */
const MAX_EARLIER = 500_000;

type Stored = Pick<MessageRecord, 'id' | 'numericId'>;

/**
 * Which of the keyed message ids are stored, as cheaply as each can be told:
 * core's recent messages; in the first `historyForMs` after core started, the
 * keyed messages stored in the `historyForMs` before it (a first try whose
 * answer a crash lost was stored by a core that no longer runs, and its
 * retry comes once this one is up), loaded from history once at the start;
 * then hot state, which holds every message until it ends, and a keyed one
 * for as long as its key lives after that (HERMOD_IDEMPOTENCY_TTL, a day; in
 * memory at most the last 200,000 keyed ones that ended), and history for
 * the ids hot state knows (for their numbers). What hot state loses (the
 * in-process state in a crash) the window covers for its first minutes; a
 * retry after that is stored again (README, "Retry a failed send with its
 * key").
 *
 * A chDB point query costs about 5 ms of CPU however few ids it names: asking
 * history about every keyed send took keyed v2 sends from 456 to 170 a
 * second in the acceptance bench, and one query at a time for what arrived
 * meanwhile still to 237–596. So history is asked once at the start, and
 * again only for what hot state knows (a retry), one query at a time; should
 * the start's load fail, or hold more than MAX_EARLIER, the window asks
 * history about each keyed send instead, as correct and as slow.
 */
export function storedKeyedMessages(deps: {
  history: Pick<MessageHistory, 'findMessages' | 'keyedMessagesSince'>;
  state: Pick<HotState, 'getStatus'>;
  recent: Pick<RecentMessages, 'get'>;
  historyForMs: number;
  log?: Logger;
  now?: () => number;
}): StoredKeyedMessages {
  const now = deps.now ?? Date.now;
  let startedAt = now();
  const inHistory = createBatcher<string, MessageRecord | undefined>(
    async (ids) => {
      const found = new Map((await deps.history.findMessages(ids)).map((m) => [m.id, m]));
      return ids.map((id) => found.get(id));
    },
    { maxItems: 1000, maxDelayMs: 0, maxConcurrent: 1 },
  );
  /** The keyed messages stored before the start (undefined: history is asked instead); loaded on the first keyed send. */
  let earlier: Promise<Map<string, Stored> | undefined> | undefined;
  const loadEarlier = (): Promise<Map<string, Stored> | undefined> =>
    (earlier ??= Promise.resolve()
      .then(() => deps.history.keyedMessagesSince(startedAt - deps.historyForMs, MAX_EARLIER + 1))
      .then(
        (rows) => {
          if (rows.length > MAX_EARLIER) {
            deps.log?.warn('more keyed messages were stored before the start than are kept in memory; keyed sends ask history until the window ends', {
              kept: MAX_EARLIER,
              windowMs: deps.historyForMs,
            });
            return undefined;
          }
          return new Map(rows.map((r) => [r.id, { id: r.id, numericId: r.numericId }]));
        },
        (err: unknown) => {
          deps.log?.warn('could not load the keyed messages stored before the start; keyed sends ask history until the window ends', { err });
          return undefined;
        },
      ));
  const find = async (ids: string[]): Promise<Stored[]> => {
    const found: Stored[] = [];
    let unknown: string[] = [];
    for (const id of ids) {
      const r = deps.recent.get(id);
      if (r) found.push(r);
      else unknown.push(id);
    }
    if (unknown.length === 0) return found;
    if (now() - startedAt < deps.historyForMs) {
      const before = await loadEarlier();
      if (!before) {
        for (const m of await Promise.all(unknown.map((id) => inHistory.add(id)))) if (m) found.push(m);
        return found;
      }
      unknown = unknown.filter((id) => {
        const m = before.get(id);
        if (m) found.push(m);
        return !m;
      });
      if (unknown.length === 0) return found;
    } else earlier = undefined; // the window is over: its messages may go
    const inHotState = (await Promise.all(unknown.map((id) => deps.state.getStatus(id)))).flatMap((s, i) => (s ? [unknown[i]!] : []));
    const records = await Promise.all(inHotState.map((id) => inHistory.add(id)));
    for (const m of records) if (m) found.push(m);
    // Hot state has it, history not yet (another core's write on its way): storing it would store it twice.
    if (records.some((m) => !m)) {
      throw new HermodError('unavailable', 'the message of this Idempotency-Key is being stored by another core; retry in a moment', { retryable: true });
    }
    return found;
  };
  return Object.assign(find, {
    reopen(): void {
      startedAt = now();
      earlier = undefined;
    },
  });
}

/**
 * Finds the stored messages of keyed sends; `reopen()` starts the window of a
 * start again: hot state lost its data (a Redis back without it), and with it
 * the answers of recent keys, so the keyed messages stored in the window
 * before are looked for in history again for as long.
 */
export type StoredKeyedMessages = ((ids: string[]) => Promise<Stored[]>) & { reopen(): void };
