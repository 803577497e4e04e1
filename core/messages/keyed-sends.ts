import { HermodError, toHermodError } from '../../lib/errors';
import type { MessageRecord } from '../ports/message-history';

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
 * messages.proto). Before storing a keyed message, intake asks history
 * whether that id is there (one query for a call's keyed messages), and a
 * retry that arrives while the first try is still being stored waits for it.
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
