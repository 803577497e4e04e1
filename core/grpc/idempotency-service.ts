import { randomUUID } from 'node:crypto';
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type {
  ClaimManyRequest,
  ClaimManyResponse,
  ClaimRequest,
  ClaimResponse,
  CompleteManyRequest,
  CompleteManyResponse,
  CompleteRequest,
  CompleteResponse,
  ItemFailure,
  ReleaseRequest,
  RenewRequest,
} from '../../proto/gen/hermod/v1/idempotency';
import type { HotState } from '../ports/state';
import { HermodError, toHermodError } from '../../lib/errors';
import { unaryHandler } from './unary-handler';

export interface IdempotencyServices {
  state: HotState;
  /** How long an Idempotency-Key and its answer are kept. */
  ttlMs: number;
  /** How long a claim without its answer is held unless renewed (a gateway that died mid-request renews it no more). */
  leaseMs: number;
}

// Keys are scoped to the application, so two tenants never collide.
const scoped = (applicationId: string, key: string): string => `${applicationId}:${key}`;

function checked(req: { applicationId: string; key: string }): string {
  if (!req.applicationId || !req.key) throw new HermodError('missing_attrib', 'application and key are required');
  return scoped(req.applicationId, req.key);
}

/**
 * The Idempotency service: each claim gets a random claim id, and renew,
 * complete and release act only for the claim that still holds the key.
 */
export function idempotencyService(services: IdempotencyServices): UntypedServiceImplementation {
  const { state, ttlMs, leaseMs } = services;
  const claim = async (req: ClaimRequest): Promise<ClaimResponse> => {
    const key = checked(req);
    if (req.claimId.length > 64) throw new HermodError('invalid_attrib', 'claim id is at most 64 characters');
    const claimId = req.claimId || randomUUID();
    const held = await state.claimIdempotencyKey(key, req.fingerprint, claimId, leaseMs);
    return held
      ? { claimed: false, fingerprint: held.fingerprint, response: held.response ?? '', claimId: '', leaseMs }
      : { claimed: true, fingerprint: req.fingerprint, response: '', claimId, leaseMs };
  };
  const complete = async (req: CompleteRequest): Promise<CompleteResponse> => ({
    stored: await state.completeIdempotencyKey(checked(req), req.claimId, { fingerprint: req.fingerprint, response: req.response }, ttlMs),
  });
  return {
    claim: unaryHandler('Claim', claim),
    claimMany: unaryHandler(
      'ClaimMany',
      async (req: ClaimManyRequest): Promise<ClaimManyResponse> => ({
        results: await Promise.all(req.claims.map((c) => claim(c).then((response) => ({ response, failure: undefined }), failed))),
      }),
    ),
    completeMany: unaryHandler(
      'CompleteMany',
      async (req: CompleteManyRequest): Promise<CompleteManyResponse> => ({
        results: await Promise.all(req.completes.map((c) => complete(c).then((response) => ({ response, failure: undefined }), failed))),
      }),
    ),
    // A claim id of '' is a gateway from before claim ids (during an upgrade): it never renews, and completes and releases as it did.
    renew: unaryHandler('Renew', async (req: RenewRequest) => ({
      renewed: req.claimId !== '' && (await state.renewIdempotencyKey(checked(req), req.claimId, leaseMs)),
    })),
    complete: unaryHandler('Complete', complete),
    release: unaryHandler('Release', async (req: ReleaseRequest) => {
      await state.releaseIdempotencyKey(checked(req), req.claimId);
      return {};
    }),
  };
}

/** One item of a ...Many call that failed, as its result. */
const failed = (err: unknown): { response: undefined; failure: ItemFailure } => {
  const e = toHermodError(err);
  return { response: undefined, failure: { code: e.code, message: e.message } };
};
