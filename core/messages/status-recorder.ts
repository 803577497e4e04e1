import type { HotState } from '../ports/state';
import type { MessageHistory, StatusEvent } from '../ports/message-history';
import type { MessageStatus } from '../domain/message-status';
import { createBatcher } from '../../lib/batcher';
import { messagesByStatus } from '../../lib/metrics';

export interface StatusChange {
  messageId: string;
  applicationId: string;
  channel: string;
  status: MessageStatus;
  at: number;
  detail?: string;
  carrierId?: string;
  errorCode?: string;
}

export interface StatusRecorder {
  /**
   * Applies the changes that move a message forward and records each applied
   * one as an event in history. Resolves once those events are durable.
   * Returns which changes were applied.
   */
  record(changes: readonly StatusChange[]): Promise<boolean[]>;
  /** Listeners see every applied change (callbacks hang off this). */
  onApplied(listener: (change: StatusChange) => void): void;
  /** Tells listeners about changes applied elsewhere (the `accepted` of intake). */
  announce(changes: readonly StatusChange[]): void;
  drain(): Promise<void>;
}

export function createStatusRecorder(deps: { history: MessageHistory; state: HotState }): StatusRecorder {
  const listeners: ((change: StatusChange) => void)[] = [];
  // Events from many handlers go to history together: one insert per flush.
  const events = createBatcher<StatusEvent, void>(
    async (batch) => {
      await deps.history.appendEvents(batch);
      return [];
    },
    { maxItems: 5000, maxDelayMs: 5, maxConcurrent: 2 },
  );

  return {
    async record(changes) {
      if (changes.length === 0) return [];
      const applied = await deps.state.advanceStatuses(changes.map((c) => ({ id: c.messageId, status: c.status, at: c.at, carrierId: c.carrierId })));
      const writes: Promise<void>[] = [];
      changes.forEach((c, i) => {
        if (!applied[i]) return;
        writes.push(
          events.add({
            messageId: c.messageId,
            applicationId: c.applicationId,
            status: c.status,
            at: c.at,
            detail: c.detail ?? '',
            carrierId: c.carrierId ?? '',
            errorCode: c.errorCode ?? '',
          }),
        );
        messagesByStatus.inc({ channel: c.channel, status: c.status });
      });
      await Promise.all(writes);
      changes.forEach((c, i) => {
        if (applied[i]) for (const l of listeners) l(c);
      });
      return applied;
    },
    onApplied(listener) {
      listeners.push(listener);
    },
    announce(changes) {
      for (const c of changes) for (const l of listeners) l(c);
    },
    drain: () => events.drain(),
  };
}
