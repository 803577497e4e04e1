import type { MessageRecord } from '../ports/history';

/**
 * The most recently accepted messages of this core process, so that a client
 * polling for the status of what it just sent is answered from memory rather
 * than by a history query. Bounded: the oldest entries go first.
 */
export interface RecentMessages {
  put(records: readonly MessageRecord[]): void;
  get(id: string): MessageRecord | undefined;
}

export function createRecentMessages(maxEntries = 200_000): RecentMessages {
  const entries = new Map<string, MessageRecord>();
  return {
    put(records) {
      for (const r of records) {
        entries.delete(r.id);
        entries.set(r.id, r);
      }
      while (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
    },
    get: (id) => entries.get(id),
  };
}
