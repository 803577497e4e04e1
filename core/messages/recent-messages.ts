import type { MessageRecord } from '../ports/message-history';

/**
 * The most recently accepted messages of this core process, so that a client
 * polling for the status of what it just sent is answered from memory rather
 * than by a history query. Bounded: the oldest entries go first.
 */
export interface RecentMessages {
  put(records: readonly MessageRecord[]): void;
  get(id: string): MessageRecord | undefined;
  getByNumericId(numericId: number): MessageRecord | undefined;
}

export function createRecentMessages(maxEntries = 200_000): RecentMessages {
  const entries = new Map<string, MessageRecord>();
  const byNumericId = new Map<number, string>();
  return {
    put(records) {
      for (const r of records) {
        entries.delete(r.id);
        entries.set(r.id, r);
        byNumericId.set(r.numericId, r.id);
      }
      while (entries.size > maxEntries) {
        const oldest = entries.values().next().value as MessageRecord;
        entries.delete(oldest.id);
        byNumericId.delete(oldest.numericId);
      }
    },
    get: (id) => entries.get(id),
    getByNumericId(numericId) {
      const id = byNumericId.get(numericId);
      return id === undefined ? undefined : entries.get(id);
    },
  };
}
