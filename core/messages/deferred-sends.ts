import { stageOf } from '../domain/message-status';
import type { StatusUpdate } from '../ports/bus-payloads';
import type { MessageHistory } from '../ports/message-history';
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
  history: Pick<MessageHistory, 'findMessage'>;
  state: Pick<HotState, 'getStatus'>;
  intake: Pick<MessageIntake, 'dispatch'>;
  /** Resolves once the orchestrator runs (it starts after the status topic's consumer). */
  attempts: () => Promise<AttemptRetries>;
  log: Logger;
}) {
  return async (deferrals: readonly StatusUpdate[]): Promise<void> => {
    await Promise.all(
      deferrals.map(async (u) => {
        const retryAt = u.retryAt!;
        const deferredSince = u.deferredSince ?? Date.now();
        const stored = await deps.history.findMessage(u.id);
        if (!stored) {
          deps.log.warn('a deferred message is not in history; not handed over again', { id: u.id });
          return;
        }
        const status = (await deps.state.getStatus(u.id))?.status ?? stored.status;
        if (stageOf(status) >= SUBMITTED) return;
        if (stored.via === 'im_attempt') {
          (await deps.attempts()).retryAttempt(u.id, retryAt, deferredSince);
          return;
        }
        const { status: _status, statusAt: _statusAt, ...record } = stored;
        await deps.intake.dispatch([{ ...record, scheduledAt: retryAt, deferredSince }]);
      }),
    );
  };
}
