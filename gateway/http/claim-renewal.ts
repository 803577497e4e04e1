import type { RenewRequest } from '../../proto/gen/hermod/v1/idempotency';
import type { CoreClient } from '../core-client';

export interface ClaimRenewal {
  stop(): void;
}

/**
 * Renews a claimed Idempotency-Key every third of its lease until stopped, so
 * a request that runs longer than the lease (a list of millions of members)
 * keeps its key; a gateway that dies stops renewing and the lease runs out.
 * A renewal that fails (core or hot state away a moment) is tried at the next
 * tick; one answered not renewed means the claim is gone and renewing stops.
 */
export function renewClaim(store: Pick<CoreClient, 'renewIdempotencyKey'>, request: RenewRequest, leaseMs: number): ClaimRenewal {
  if (leaseMs <= 0) return { stop: () => undefined };
  let renewing = false;
  const timer = setInterval(
    () => {
      if (renewing) return;
      renewing = true;
      store.renewIdempotencyKey(request).then(
        ({ renewed }) => {
          renewing = false;
          if (!renewed) clearInterval(timer);
        },
        () => {
          renewing = false;
        },
      );
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  // A request in flight keeps the process up; its renewals need not.
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
