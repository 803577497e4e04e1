import type { MessageHistory, StoredMessage } from '../ports/message-history';
import type { HotState } from '../ports/state';
import type { RecentMessages } from './recent-messages';
import { isFinal, stageOf } from '../domain/message-status';
import { HermodError } from '../../lib/errors';
import { createStoredReads } from './stored-reads';

/**
 * Reads a message as its application sees it. Recent messages come from
 * memory with their status from hot state; older ones from history, with hot
 * state's status when it is ahead (history events are written in batches and
 * may trail by a few milliseconds). Another application's id is not found.
 */
export function createMessageReader(deps: { history: MessageHistory; state: HotState; recent: RecentMessages }) {
  // Reads that come while one runs go to history together (after a restart every read misses memory).
  const stored = createStoredReads(deps.history);
  const reader = {
    /** By the integer id of Gateway v1. */
    async getByNumericId(applicationId: string, numericId: number): Promise<StoredMessage> {
      const recent = deps.recent.getByNumericId(numericId);
      // Another application's message is not found, by the id asked for: its UUID is not told.
      if (recent && recent.applicationId !== applicationId) throw notFound(String(numericId));
      if (recent) return reader.get(applicationId, recent.id);
      const stored = await deps.history.getMessageByNumericId(applicationId, numericId);
      if (!stored) throw notFound(String(numericId));
      return reader.get(applicationId, stored.id);
    },
    async get(applicationId: string, id: string): Promise<StoredMessage> {
      const recent = deps.recent.get(id);
      if (recent) {
        if (recent.applicationId !== applicationId) throw notFound(id);
        const hot = await deps.state.getStatus(id);
        if (hot) return { ...recent, status: hot.status, statusAt: hot.at };
      }
      const [found, hot] = await Promise.all([stored.get(applicationId, id), deps.state.getStatus(id)]);
      if (!found) throw notFound(id);
      deps.recent.put([found]);
      // Final already: it stays only the final time to live (a client polling it again meanwhile).
      if (isFinal(found.status)) deps.recent.finished([found.id]);
      if (hot && stageOf(hot.status) > stageOf(found.status)) return { ...found, status: hot.status, statusAt: hot.at };
      return found;
    },
  };
  return reader;
}

const notFound = (id: string): HermodError => new HermodError('not_found', `message ${id} not found`);

export type MessageReader = ReturnType<typeof createMessageReader>;
