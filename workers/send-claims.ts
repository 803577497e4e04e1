import { randomUUID } from 'node:crypto';
import { isFinal } from '../core/domain/message-status';
import type { HotState } from '../core/ports/state';
import { HermodError } from '../lib/errors';

/** How long a claim lives unless renewed: how long the jobs of a worker that died wait before another sends them. */
const CLAIM_MS = 15_000;
/** How often a worker renews the claims it holds (several times within their life). */
const RENEW_MS = 5_000;
/** How often a worker waiting on another's claim looks again. */
const LOOK_MS = 250;

export interface SendClaims {
  /**
   * Takes the sending of `messageId` for this worker: 'mine' once it holds
   * the claim and the message still wants sending; 'done' when another worker
   * sent it (or it ended) meanwhile. Waits while another worker holds it.
   */
  take(messageId: string): Promise<'mine' | 'done'>;
  /** Gives up this worker's claim (sent, or not to be sent by it). */
  release(messageId: string): Promise<void>;
  stop(): void;
}

/**
 * A job reaches two workers at once when a partition is taken over while its
 * owner still works on it: a Redis that stalled past the partition's lease,
 * a Kafka rebalance while a submit was on its way. Each checked hot state for
 * the carrier's id before sending, neither found it, and the SMS went out
 * twice. Each try claims the message in hot state first (one try's token at a
 * time, renewed while held); a worker that finds it claimed waits until the
 * other has sent it (its carrier id is stored) or its claim runs out (it died).
 */
export function createSendClaims(state: Pick<HotState, 'claimSends' | 'releaseSends' | 'wereSubmitted' | 'getStatus'>, isStopping: () => boolean): SendClaims {
  const held = new Map<string, string>();
  const renewal = setInterval(() => {
    if (held.size === 0) return;
    // A renewal lost (hot state away) is tried again at the next tick, well within the claim's life.
    state
      .claimSends(
        [...held].map(([messageId, token]) => ({ messageId, token })),
        CLAIM_MS,
      )
      .catch(() => undefined);
  }, RENEW_MS);
  renewal.unref();

  /** Sent by another worker (its carrier id is stored), or ended without it (refused, cancelled). */
  const settledElsewhere = async (messageId: string): Promise<boolean> => {
    const [[submitted], status] = await Promise.all([state.wereSubmitted([messageId]), state.getStatus(messageId)]);
    return submitted === true || (status !== undefined && isFinal(status.status));
  };

  return {
    async take(messageId) {
      const token = held.get(messageId) ?? randomUUID();
      for (;;) {
        const [mine] = await state.claimSends([{ messageId, token }], CLAIM_MS);
        if (mine) {
          held.set(messageId, token);
          // Looked at once the claim is held: a try that sent it and let go just before this one claimed it is seen here.
          if (!(await settledElsewhere(messageId))) return 'mine';
          await this.release(messageId);
          return 'done';
        }
        if (await settledElsewhere(messageId)) return 'done';
        if (isStopping()) throw new HermodError('unavailable', 'stopping while another worker sends this message', { retryable: true });
        await new Promise((r) => setTimeout(r, LOOK_MS));
      }
    },
    async release(messageId) {
      const token = held.get(messageId);
      if (token === undefined) return;
      held.delete(messageId);
      // Not given up (hot state away): the claim runs out by itself.
      await state.releaseSends([{ messageId, token }]).catch(() => undefined);
    },
    stop: () => clearInterval(renewal),
  };
}
