import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { CoreClient } from '../core-client';
import { HermodError } from '../../lib/errors';

interface StoredAnswer {
  status: number;
  type: string;
  body: unknown;
}

/**
 * Runs a send at most once per Idempotency-Key (per application, for 24 hours
 * by default): a repeat with the same request gets the first answer again and
 * sends nothing; the same key with a different request is refused; a key
 * whose first request is still running is refused as a conflict. A request
 * that fails releases its key so the client can retry. Call after the body
 * has been read (readJson keeps the raw text for the fingerprint).
 */
export async function idempotent(ctx: Context, core: CoreClient, applicationId: string, run: () => Promise<void>): Promise<void> {
  const key = ctx.get('idempotency-key');
  if (!key) return run();
  if (key.length > 255) throw new HermodError('invalid_attrib', 'Idempotency-Key is at most 255 characters');
  const fingerprint = createHash('sha256').update(`${ctx.method} ${ctx.path}\n${(ctx.state.rawBody as string | undefined) ?? ''}`).digest('hex');
  const claim = await core.claimIdempotencyKey({ applicationId, key, fingerprint });
  if (!claim.claimed) {
    if (claim.fingerprint !== fingerprint) throw new HermodError('unprocessable', 'Idempotency-Key was already used with a different request');
    if (!claim.response) throw new HermodError('conflict', 'a request with this Idempotency-Key is still being processed');
    const answer = JSON.parse(claim.response) as StoredAnswer;
    ctx.status = answer.status;
    ctx.type = answer.type;
    ctx.body = answer.body;
    ctx.set('Idempotent-Replayed', 'true');
    return;
  }
  try {
    await run();
  } catch (err) {
    await core.releaseIdempotencyKey({ applicationId, key }).catch(() => undefined);
    throw err;
  }
  const answer: StoredAnswer = { status: ctx.status, type: ctx.type, body: ctx.body };
  await core.completeIdempotencyKey({ applicationId, key, fingerprint, response: JSON.stringify(answer) });
}
