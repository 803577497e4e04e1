import { stageOf } from '../domain/message-status';
import type { StatusUpdate } from '../ports/bus-payloads';
import type { MessageHistory, MessageRecord } from '../ports/message-history';
import type { HotState } from '../ports/state';
import type { MessageIntake } from './message-intake';
import type { Logger } from '../../lib/log';

const SUBMITTED = stageOf('submitted');

/** What takes up an Intelligent Messaging attempt its carrier keeps refusing (im-orchestrator.ts). */
export interface AttemptRetries {
  retryAttempt(attemptId: string, retryAt: number, deferredSince: number): void;
}

/**
 * Core's side of a deferral: a worker whose carrier kept refusing a message
 * for a reason that passes (an e-mail server greylisting for minutes, an
 * SMSC throttling) gives it back on the status topic with the time to try
 * again (channel-worker.ts), and holds no batch meanwhile. The message waits
 * in the scheduler, as a scheduled one (spilled to disk when it is far off),
 * and is screened again at its time; an Intelligent Messaging attempt waits
 * with its orchestrator, which knows its media and its timeout. Either way
 * it is not lost in a crash: recovery hands over every message its carrier
 * has not confirmed. A copy that got through meanwhile (it was `submitted`)
 * is left alone.
 */
export function createDeferredSends(deps: {
  history: Pick<MessageHistory, 'findMessages'>;
  state: Pick<HotState, 'getStatus'>;
  intake: Pick<MessageIntake, 'retryLater'>;
  /** Resolves once the orchestrator runs (it starts after the status topic's consumer). */
  attempts: () => Promise<AttemptRetries>;
  log: Logger;
}) {
  return async (deferrals: readonly StatusUpdate[]): Promise<void> => {
    // One history query for the batch: a carrier refusing a whole campaign for an hour gives back every message.
    const found = new Map((await deps.history.findMessages([...new Set(deferrals.map((u) => u.id))])).map((m) => [m.id, m]));
    const statuses = await Promise.all(deferrals.map((u) => deps.state.getStatus(u.id)));
    const later: MessageRecord[] = [];
    const attempts: StatusUpdate[] = [];
    deferrals.forEach((u, i) => {
      const record = found.get(u.id);
      if (!record) {
        deps.log.warn('a deferred message is not in history; not handed over again', { id: u.id });
        return;
      }
      const status = statuses[i]?.status;
      if (status && stageOf(status) >= SUBMITTED) return;
      if (record.via === 'im_attempt') attempts.push(u);
      else later.push({ ...record, scheduledAt: u.retryAt!, deferredSince: u.deferredSince ?? Date.now() });
    });
    if (attempts.length > 0) {
      const orchestrator = await deps.attempts();
      for (const u of attempts) orchestrator.retryAttempt(u.id, u.retryAt!, u.deferredSince ?? Date.now());
    }
    if (later.length > 0) deps.intake.retryLater(later);
  };
}
