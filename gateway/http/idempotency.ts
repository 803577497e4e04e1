import { createHash, randomUUID } from 'node:crypto';
import { timesSent } from './times-sent';
import type { Context } from 'koa';
import type { CoreClient } from '../core-client';
import type { ClaimResponse } from '../../proto/gen/hermod/v1/idempotency';
import { describeDuration } from '../../lib/duration';
import { HermodError } from '../../lib/errors';
import { renewClaim } from './claim-renewal';

/** Where keys and first answers are kept: core's Idempotency service, shared by every gateway process. */
export type IdempotencyStore = Pick<CoreClient, 'claimIdempotencyKey' | 'renewIdempotencyKey' | 'completeIdempotencyKey' | 'releaseIdempotencyKey'>;

/** The interface a key belongs to: the same key on two interfaces names two unrelated requests. */
export type IdempotencyScope = 'sms_v2' | 'gateway_v1' | 'intelligent_messaging' | 'campaign_manager';

interface StoredAnswer {
  status: number;
  type: string;
  body: unknown;
  /** Campaign Manager answers name the new list or report here. */
  location?: string;
}

/** Longest Idempotency-Key a client may send. */
export const MAX_IDEMPOTENCY_KEY = 255;

/** The request's Idempotency-Key as stored (scoped to its interface), or undefined without one. */
export function scopedKey(ctx: Context, scope: IdempotencyScope): string | undefined {
  if (ctx.headers['idempotency-key'] === undefined) return undefined;
  // Node joins repeated headers with ", ": which of them the client meant is not for the gateway to guess.
  const sent = timesSent(ctx.req.rawHeaders, 'idempotency-key');
  if (sent > 1) throw new HermodError('invalid_attrib', `send one Idempotency-Key header, not ${sent}`);
  const key = ctx.get('idempotency-key');
  // Sent but empty (or only blanks, which HTTP strips): ignoring it would leave unprotected a send the client means to protect.
  if (!key) throw new HermodError('invalid_attrib', `Idempotency-Key is empty; send 1 to ${MAX_IDEMPOTENCY_KEY} characters, or no header`);
  // Node reads a header's bytes one to a character: count the characters their UTF-8 writes (ā is two bytes, 🔑 four).
  if (key.length > MAX_IDEMPOTENCY_KEY && [...Buffer.from(key, 'latin1').toString('utf8')].length > MAX_IDEMPOTENCY_KEY)
    throw new HermodError('invalid_attrib', `Idempotency-Key is at most ${MAX_IDEMPOTENCY_KEY} characters`);
  // Scope names hold no ':', so `scope:key` never collides across interfaces.
  return `${scope}:${key}`;
}

export function differentRequest(): HermodError {
  return new HermodError('unprocessable', 'Idempotency-Key was already used with a different request');
}

/**
 * Seconds a client is told to wait before retrying a request whose key is
 * still held. Most first requests end within that; one that outlived its
 * gateway holds the key until its lease runs out, and a retry each second
 * costs one claim.
 */
const STILL_RUNNING_RETRY_AFTER_S = 1;

/**
 * The 409 for a key another request still holds, with `Retry-After` on the
 * answer. It says how long the key may stay held should that request's
 * gateway have died (its lease, HERMOD_IDEMPOTENCY_LEASE): a client told only
 * "retry in 1 second" retried for minutes not knowing why.
 */
export function stillRunning(ctx: Context, leaseMs: number): HermodError {
  ctx.set('Retry-After', String(STILL_RUNNING_RETRY_AFTER_S));
  return new HermodError(
    'conflict',
    `a request with this Idempotency-Key is still being processed; retry in ${STILL_RUNNING_RETRY_AFTER_S} second ` +
      `(should that request's gateway have stopped, the key is free again at most ${describeDuration(leaseMs)} after its request was last seen)`,
  );
}

/** Answers with the first request's answer, marked as a replay. */
export function replay(ctx: Context, response: string): void {
  const answer = JSON.parse(response) as StoredAnswer;
  ctx.status = answer.status;
  ctx.type = answer.type;
  ctx.body = answer.body;
  if (answer.location) ctx.set('Location', answer.location);
  ctx.set('Idempotent-Replayed', 'true');
}

/**
 * Marks as a replay an answer core recovered rather than made: every message
 * (or the list or campaign) it names was stored by an earlier try of the
 * request, whose answer was lost (core died before it was kept), and nothing
 * was stored now. A client reading the header to tell "created now" from
 * "already there" is told the same as for an answer kept here.
 */
export function markRecovered(ctx: Context, replayed: readonly boolean[]): void {
  if (replayed.length > 0 && replayed.every(Boolean)) ctx.set('Idempotent-Replayed', 'true');
}

/**
 * Names each message of a request for core (`dedup_key` in messages.proto) by
 * its position in the request: '' for a request without an Idempotency-Key.
 */
export type DedupKeyOf = (position: number) => string;

const NO_KEY: DedupKeyOf = () => '';

/**
 * The key and the whole request as one name for core: a different request
 * under a released key names other messages (or another list or campaign).
 */
export function requestKey(scopedKey: string, fingerprint: string): string {
  return createHash('sha256').update(`${scopedKey}\n${fingerprint}`).digest('base64url');
}

/**
 * How long a release core could not take is tried again: the default lease
 * (HERMOD_IDEMPOTENCY_LEASE) ten times over, after which the claim has run
 * out by itself however it was set.
 */
const RELEASE_FOR_MS = 10 * 60_000;
/** Waits between tries of a release: 1 s, doubling to at most 15 s. */
const RELEASE_WAIT_MS = { first: 1000, most: 15_000 };

/**
 * Releases a failed request's key; one core could not take (it died under the
 * request, and its 503 is what the client is about to retry) is tried again
 * in the background, a second after, then less often, for as long as the
 * lease would hold it, so the retry is not refused as still running once core
 * is back (on Kafka a restarted core can take half a minute to listen).
 */
async function release(
  store: IdempotencyStore,
  request: { applicationId: string; key: string; claimId: string },
  until = Date.now() + RELEASE_FOR_MS,
  waitMs = RELEASE_WAIT_MS.first,
): Promise<void> {
  try {
    await store.releaseIdempotencyKey(request);
  } catch {
    if (Date.now() + waitMs > until) return;
    setTimeout(() => void release(store, request, until, Math.min(RELEASE_WAIT_MS.most, waitMs * 2)), waitMs).unref();
  }
}

/**
 * Claims the key under an id chosen here: should core take the claim but its
 * answer not come back (a timeout, core stopped a while), the claim is
 * released all the same (release), and the client's retry runs instead of
 * being refused as still running for the key's whole lease.
 */
export async function claimKey(store: IdempotencyStore, request: { applicationId: string; key: string; fingerprint: string }): Promise<ClaimResponse> {
  const claimId = randomUUID();
  try {
    return await store.claimIdempotencyKey({ ...request, claimId });
  } catch (err) {
    await release(store, { applicationId: request.applicationId, key: request.key, claimId });
    throw err;
  }
}

/**
 * Runs the claimed request, renewing the claim while it runs; a failure (or
 * an answer that could not be kept) releases the key so the client can retry, a success stores the answer
 * under the fingerprint `fingerprint()` gives once `run` is done. A retry
 * after a failure is safe where it matters: core derives the ids of a keyed
 * request's messages from the key (`DedupKeyOf`), and answers those it
 * already stored instead of storing them again.
 *
 * Should the claim have been lost all the same (core unreachable for a whole
 * lease, then a retry claimed the key), the answer is not stored over the
 * retry's: this client still gets the answer of the work it did, and later
 * retries get the answer of the claim that holds the key.
 */
export async function runClaimed(
  ctx: Context,
  store: IdempotencyStore,
  applicationId: string,
  key: string,
  claim: Pick<ClaimResponse, 'claimId' | 'leaseMs'>,
  run: () => Promise<void>,
  fingerprint: () => string,
): Promise<void> {
  const { claimId } = claim;
  const renewal = renewClaim(store, { applicationId, key, claimId }, claim.leaseMs);
  try {
    try {
      await run();
    } catch (err) {
      await release(store, { applicationId, key, claimId });
      throw err;
    }
    const location = ctx.response.get('Location');
    const answer: StoredAnswer = { status: ctx.status, type: ctx.type, body: ctx.body, ...(location ? { location } : {}) };
    try {
      await store.completeIdempotencyKey({ applicationId, key, claimId, fingerprint: fingerprint(), response: JSON.stringify(answer) });
    } catch (err) {
      // The work is done but its answer not kept (hot state failed under that write): the client is told to retry,
      // and the retry runs again, naming the same messages, which core answers with the stored ones.
      await release(store, { applicationId, key, claimId });
      throw err;
    }
  } finally {
    renewal.stop();
  }
}

/**
 * Runs a send at most once per Idempotency-Key (per application and
 * interface, for 24 hours by default): a repeat with the same request gets
 * the first answer again and sends nothing; the same key with a different
 * request is refused; a key whose first request is still running is refused
 * as a conflict. A request that fails releases its key so the client can
 * retry. `run` names its messages for core with the `DedupKeyOf` it is given.
 * Call after the body has been read (readJson keeps the raw text for the
 * fingerprint); for a streamed body see idempotentStream.
 */
export async function idempotent(
  ctx: Context,
  store: IdempotencyStore,
  applicationId: string,
  scope: IdempotencyScope,
  run: (dedupKeyOf: DedupKeyOf) => Promise<void>,
): Promise<void> {
  const key = scopedKey(ctx, scope);
  if (!key) return run(NO_KEY);
  const fingerprint = createHash('sha256')
    .update(`${ctx.method} ${ctx.path}\n${(ctx.state.rawBody as string | undefined) ?? ''}`)
    .digest('hex');
  const claim = await claimKey(store, { applicationId, key, fingerprint });
  if (!claim.claimed) {
    if (claim.fingerprint !== fingerprint) throw differentRequest();
    if (!claim.response) throw stillRunning(ctx, claim.leaseMs);
    return replay(ctx, claim.response);
  }
  const request = requestKey(key, fingerprint);
  await runClaimed(
    ctx,
    store,
    applicationId,
    key,
    claim,
    () => run((position) => `${request}.${position}`),
    () => fingerprint,
  );
}
