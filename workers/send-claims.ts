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
   * Takes the sending of each message for this worker, in order: true once
   * it holds the claim and the message still wants sending; false when
   * another worker sent it (or it ended) meanwhile. Waits while another
   * worker holds one.
   */
  take(messageIds: readonly string[]): Promise<boolean[]>;
  /** Gives up this worker's claims (sent, or not to be sent by it). */
  release(messageIds: readonly string[]): Promise<void>;
  stop(): void;
}

type ClaimState = Pick<HotState, 'claimSends' | 'releaseSends' | 'wereSubmitted' | 'getStatus'>;

/**
 * A job reaches two workers at once when a partition is taken over while its
 * owner still works on it: a Redis that stalled past the partition's lease,
 * a Kafka rebalance while a submit was on its way. Each checked hot state for
 * the carrier's id before sending, neither found it, and the SMS went out
 * twice. So each worker claims a batch's messages in hot state before
 * sending them (one call for the batch; renewed while held); a message
 * another worker holds is waited on until that worker has sent it (its
 * carrier id is stored) or its claim runs out (it died). Claims are taken in
 * one order by every worker, and a worker waiting on one holds none that
 * sorts after it, so two workers never wait on each other.
 */
export function createSendClaims(state: ClaimState, isStopping: () => boolean): SendClaims {
  const held = new Map<string, string>();
  const renewal = setInterval(() => {
    if (held.size === 0) return;
    // A renewal lost (hot state away) is tried again at the next tick, well within the claims' life.
    state
      .claimSends(
        [...held].map(([messageId, token]) => ({ messageId, token })),
        CLAIM_MS,
      )
      .catch(() => undefined);
  }, RENEW_MS);
  renewal.unref();

  /** For each message, whether another worker sent it (its carrier id is stored) or it ended without that (refused, cancelled). */
  const settledElsewhere = async (ids: readonly string[]): Promise<boolean[]> => {
    const [submitted, statuses] = await Promise.all([state.wereSubmitted(ids), Promise.all(ids.map((id) => state.getStatus(id)))]);
    return ids.map((_, i) => submitted[i] === true || (statuses[i] !== undefined && isFinal(statuses[i]!.status)));
  };

  /** Claims `ids` once; for each, true (held now), false (another worker holds it). */
  const claim = async (ids: readonly string[]): Promise<boolean[]> => {
    const tokens = ids.map((id) => held.get(id) ?? randomUUID());
    const mine = await state.claimSends(
      ids.map((messageId, i) => ({ messageId, token: tokens[i]! })),
      CLAIM_MS,
    );
    ids.forEach((id, i) => {
      if (mine[i]) held.set(id, tokens[i]!);
    });
    return mine;
  };

  const release = async (ids: readonly string[]): Promise<void> => {
    const claims = ids.flatMap((messageId) => {
      const token = held.get(messageId);
      held.delete(messageId);
      return token === undefined ? [] : [{ messageId, token }];
    });
    // Not given up (hot state away): the claims run out by themselves.
    if (claims.length > 0) await state.releaseSends(claims).catch(() => undefined);
  };

  /** Waits on one message another worker holds: false once that worker settled it, true once the claim is this one's. */
  const waitFor = async (id: string): Promise<boolean> => {
    for (;;) {
      if ((await settledElsewhere([id]))[0]) return false;
      if (isStopping()) throw new HermodError('unavailable', 'stopping while another worker sends this message', { retryable: true });
      await new Promise((r) => setTimeout(r, LOOK_MS));
      if ((await claim([id]))[0]) return true;
    }
  };

  return {
    async take(ids) {
      if (ids.length === 0) return [];
      // Claimed in one order, the same for every worker, and never holding one past a message another worker
      // holds while waiting for it: two workers handed overlapping batches (a partition taken over after a kill)
      // each held part and waited on the rest, renewing their own claims for ever, and neither batch was sent.
      const order = [...new Set(ids)].sort();
      /** true: held by this take; false: settled by another worker. */
      const got = new Map<string, boolean>();
      /** Claimed by this take (a claim held before it is not this take's to give back). */
      const taken = new Set<string>();
      try {
        for (;;) {
          const rest = order.filter((id) => !got.has(id));
          if (rest.length === 0) break;
          const heldBefore = new Set(rest.filter((id) => held.has(id)));
          const mine = await claim(rest);
          rest.forEach((id, i) => {
            if (!mine[i]) return;
            got.set(id, true);
            if (!heldBefore.has(id)) taken.add(id);
          });
          const blocked = rest.find((_, i) => !mine[i]);
          if (blocked === undefined) break;
          const past = order.filter((id) => id > blocked && taken.has(id));
          if (past.length > 0) {
            await release(past);
            for (const id of past) {
              got.delete(id);
              taken.delete(id);
            }
          }
          const now = await waitFor(blocked);
          got.set(blocked, now);
          if (now) taken.add(blocked);
        }
        // Looked at once the claims are held: a try that sent one and let go just before this one claimed it is seen here.
        const heldIds = order.filter((id) => got.get(id) === true);
        const settled = await settledElsewhere(heldIds);
        await release(heldIds.filter((_, k) => settled[k]));
        const sendable = new Set(heldIds.filter((_, k) => !settled[k]));
        return ids.map((id) => sendable.has(id));
      } catch (err) {
        // The batch fails and comes back, maybe to another worker: claims kept (and renewed) here would hold it off.
        await release(ids.filter((id) => held.has(id)));
        throw err;
      }
    },
    release,
    stop: () => clearInterval(renewal),
  };
}
