import type { MessageHistory, StoredMessage } from '../ports/message-history';

/** Most ids in one query of a batch. */
const MAX_BATCH = 1_000;

interface Waiting {
  applicationId: string;
  id: string;
  resolve(m: StoredMessage | undefined): void;
  reject(err: unknown): void;
}

/**
 * Reads of messages no longer in memory, from history. A read alone is one
 * query, as before; reads that come while a query runs wait for it and go
 * together in the next (by id, their statuses beside), so clients polling
 * after a restart, when memory knows nothing, cost a query a batch rather than
 * one each, one after the other in the engine (700 reads took 8 s so).
 * Another application's message is not found, as history's read by
 * application answers.
 */
export function createStoredReads(history: Pick<MessageHistory, 'getMessage' | 'findMessages' | 'latestStatuses'>) {
  let running = 0;
  let waiting: Waiting[] = [];

  const next = (): void => {
    if (running > 0 || waiting.length === 0) return;
    const batch = waiting.slice(0, MAX_BATCH);
    waiting = waiting.slice(batch.length);
    running++;
    void readMany(batch).finally(() => {
      running--;
      next();
    });
  };

  const readMany = async (batch: readonly Waiting[]): Promise<void> => {
    const ids = [...new Set(batch.map((w) => w.id))];
    try {
      const [records, latest] = await Promise.all([history.findMessages(ids), history.latestStatuses(ids)]);
      const byId = new Map(records.map((r) => [r.id, r]));
      for (const w of batch) {
        const r = byId.get(w.id);
        if (!r || r.applicationId !== w.applicationId) {
          w.resolve(undefined);
          continue;
        }
        // Stored with its `accepted` event: a message without one reads as just accepted.
        const s = latest.get(w.id) ?? { status: 'accepted' as const, at: r.acceptedAt };
        w.resolve({ ...r, status: s.status, statusAt: s.at });
      }
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  };

  return {
    async get(applicationId: string, id: string): Promise<StoredMessage | undefined> {
      if (running > 0 || waiting.length > 0)
        return new Promise((resolve, reject) => {
          waiting.push({ applicationId, id, resolve, reject });
          next();
        });
      running++;
      try {
        return await history.getMessage(applicationId, id);
      } finally {
        running--;
        next();
      }
    },
  };
}
