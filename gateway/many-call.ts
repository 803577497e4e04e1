import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { createBatcher } from '../lib/batcher';
import { HermodError, isErrorCode } from '../lib/errors';
import type { ItemFailure } from '../proto/gen/hermod/v1/idempotency';

/** Each item's outcome in a ...Many answer: its response, or why it failed. */
export interface ManyResult<Res> {
  response: Res | undefined;
  failure: ItemFailure | undefined;
}

/**
 * Calls core once for many requests (ClaimMany, CompleteMany): what the
 * gateway's requests ask while one call runs goes in the next, as sends do,
 * instead of a unary call each, which cost a gateway most of the CPU a keyed
 * send took. Each request settles with its own item's result. A core from
 * before the ...Many methods answers UNIMPLEMENTED: from then on each request
 * is its own call (`one`).
 */
export function manyCall<Req, Res>(many: (items: Req[]) => Promise<ManyResult<Res>[]>, one: (item: Req) => Promise<Res>): (item: Req) => Promise<Res> {
  let unimplemented = false;
  const batcher = createBatcher<Req, ManyResult<Res> | { error: unknown }>(
    async (items) => {
      if (!unimplemented) {
        try {
          return await many(items);
        } catch (err) {
          if (!isUnimplemented(err)) throw err;
          unimplemented = true;
        }
      }
      return Promise.all(
        items.map((item) =>
          one(item).then(
            (response) => ({ response, failure: undefined }),
            (error: unknown) => ({ error }),
          ),
        ),
      );
    },
    { maxItems: 2000, maxDelayMs: 0, maxConcurrent: 4 },
  );
  return async (item) => {
    const result = await batcher.add(item);
    if ('error' in result) throw result.error;
    if (result.failure) throw new HermodError(isErrorCode(result.failure.code) ? result.failure.code : 'internal', result.failure.message);
    if (!result.response) throw new HermodError('internal', 'core answered without a result for this request');
    return result.response;
  };
}

const isUnimplemented = (err: unknown): boolean => {
  const cause = err instanceof Error ? err.cause : undefined;
  return (cause as ServiceError | undefined)?.code === GrpcStatus.UNIMPLEMENTED;
};
