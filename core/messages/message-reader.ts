import type { History, StoredMessage } from '../ports/history';
import type { HotState } from '../ports/state';
import { stageOf } from '../domain/message-status';
import { HermodError } from '../../lib/errors';

/**
 * Reads a message as its application sees it: the stored record, with the
 * freshest status from hot state when that is ahead of history's (history
 * events are written in batches and may trail by a few milliseconds).
 */
export function createMessageReader(deps: { history: History; state: HotState }) {
  return {
    async get(applicationId: string, id: string): Promise<StoredMessage> {
      const [stored, hot] = await Promise.all([deps.history.getMessage(applicationId, id), deps.state.getStatus(id)]);
      if (!stored) throw new HermodError('not_found', `message ${id} not found`);
      if (hot && stageOf(hot.status) > stageOf(stored.status)) return { ...stored, status: hot.status, statusAt: hot.at };
      return stored;
    },
  };
}

export type MessageReader = ReturnType<typeof createMessageReader>;
