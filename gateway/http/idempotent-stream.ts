import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { HermodError } from '../../lib/errors';
import { hashing } from './body-hash';
import {
  claimKey,
  differentRequest,
  replay,
  requestKey,
  runClaimed,
  scopedKey,
  stillRunning,
  type IdempotencyScope,
  type IdempotencyStore,
} from './idempotency';

/** Held while the first request streams in; no SHA-256 in hex looks like it. */
const STREAMING = 'streaming';

/**
 * idempotent() for a body too large to hold (a list of a million members):
 * the key is claimed before the body is read, and the body is fingerprinted
 * with a running SHA-256 as `run` consumes it, so nothing is buffered. The
 * answer is stored once `run` is done (the import committed). A repeat while
 * the first still streams gets 409 at once, since its body cannot be compared
 * yet; a repeat after it is read through (hashed, not imported) and gets the
 * first answer, or 422 if its bytes differ. `run` gets, besides the body, the
 * request's name for core (`dedup_key` of campaigns.proto's ImportCommit; ''
 * without a key), to ask once the body is read through: core answers a retry
 * with the list or campaign its first try created, should that answer have
 * been lost with a core that died.
 */
export async function idempotentStream(
  ctx: Context,
  store: IdempotencyStore,
  applicationId: string,
  scope: IdempotencyScope,
  maxBytes: number,
  run: (body: AsyncIterable<Buffer>, dedupKey: () => string) => Promise<void>,
): Promise<void> {
  const source = ctx.req as AsyncIterable<Buffer>;
  const key = scopedKey(ctx, scope);
  if (!key) return run(source, () => '');
  const hash = createHash('sha256').update(`${ctx.method} ${ctx.path}\n`);
  const body = hashing(source, hash);
  let digest: string | undefined;
  const fingerprint = (): string => (digest ??= hash.digest('hex'));
  const claim = await claimKey(store, { applicationId, key, fingerprint: STREAMING });
  if (!claim.claimed) {
    if (!claim.response) throw stillRunning(ctx, claim.leaseMs);
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > maxBytes) throw new HermodError('body_too_large', `request body exceeds ${maxBytes} bytes`);
    }
    if (fingerprint() !== claim.fingerprint) throw differentRequest();
    return replay(ctx, claim.response);
  }
  await runClaimed(ctx, store, applicationId, key, claim, () => run(body, () => requestKey(key, fingerprint())), fingerprint);
}
