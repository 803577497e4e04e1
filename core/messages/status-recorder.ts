import type { HotState } from '../ports/state';
import type { MessageHistory, StatusEvent } from '../ports/message-history';
import { stageOf, type MessageStatus } from '../domain/message-status';
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
  /** A carrier's report on its submit: applied only once the message reached `submitted` (hot-state's `onceSubmitted`). */
  onceSubmitted?: boolean;
}

export interface StatusRecorder {
  /**
   * Applies the changes that move a message forward and records each applied
   * one as an event in history. Resolves once those events are durable.
   * Returns which changes were applied. The carrier's acceptance
   * (`submitted`) reported after a later stage (its receipt overtook the
   * carrier's answer) is not applied, nor counted or told to listeners, but
   * is still recorded: it is when the message left, and reports and campaign
   * counts read it from history. (Not `sent`: some carriers' webhooks report
   * it again after the worker did, and it is not a hand-over of its own.)
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

  /** Indexes of refused hand-overs whose message has since gone further. */
  async function lateHandOvers(changes: readonly StatusChange[], applied: readonly boolean[]): Promise<Set<number>> {
    const late = new Set<number>();
    const looks: Promise<void>[] = [];
    changes.forEach((c, i) => {
      if (applied[i] || c.status !== 'submitted') return;
      // Rare (a receipt before the submit's answer, or a report repeated): one look at hot state each.
      looks.push(
        deps.state.getStatus(c.messageId).then((current) => {
          if (current && stageOf(current.status) > stageOf(c.status)) late.add(i);
        }),
      );
    });
    await Promise.all(looks);
    return late;
  }

  return {
    async record(changes) {
      if (changes.length === 0) return [];
      const applied = await deps.state.advanceStatuses(
        changes.map((c) => ({ id: c.messageId, status: c.status, at: c.at, carrierId: c.carrierId, onceSubmitted: c.onceSubmitted })),
      );
      const late = await lateHandOvers(changes, applied);
      const writes: Promise<void>[] = [];
      changes.forEach((c, i) => {
        if (!applied[i] && !late.has(i)) return;
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
        if (applied[i]) messagesByStatus.inc({ channel: c.channel, status: c.status });
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
