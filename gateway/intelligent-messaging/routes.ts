import Router from '@koa/router';
import type { Authenticator } from '../auth';
import type { ImClient } from '../im-client';
import { HermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { readJson } from '../http/read-json';
import { idempotent, markRecovered, type IdempotencyStore } from '../http/idempotency';
import { namedAsSent, parseMessageRequest, toImSendRequest } from './message-request';
import type { SharedRateLimiter } from './shared-rate-limiter';
import { serveOpenApi } from '../http/openapi';
import { INTELLIGENT_MESSAGING_OPENAPI } from './openapi';
import { RETRY_AFTER_MAX, RETRY_AFTER_MIN } from './schemas';

export interface IntelligentMessagingDeps {
  im: Pick<ImClient, 'send'>;
  /** Idempotency-Key: a retried message is sent once. */
  idempotency: IdempotencyStore;
  auth: Authenticator;
  log: Logger;
  maxBodyBytes: number;
  /** Each application's requests per second, shared by every gateway (counted by core). */
  rateLimiter: SharedRateLimiter;
}

/** Intelligent Messaging: `/rest/im/v1`. */
export function intelligentMessagingRouter(deps: IntelligentMessagingDeps): Router {
  const router = new Router({ prefix: '/rest/im/v1' });
  serveOpenApi(router, INTELLIGENT_MESSAGING_OPENAPI);

  router.post('/message', async (ctx) => {
    const caller = await deps.auth.authenticate(ctx.get('authorization'), ctx.ip, true);
    const verdict = await deps.rateLimiter.take(caller.applicationId);
    // With no limit there is nothing true to announce: 0 would read as "no requests allowed".
    if (verdict.limit > 0) ctx.set('X-RateLimit-Limit', String(verdict.limit));
    if (!verdict.ok) {
      const wait = String(Math.min(RETRY_AFTER_MAX, Math.max(RETRY_AFTER_MIN, verdict.retryAfterSeconds)));
      // `RetryAfter` is the interface's header; `Retry-After` is what generic HTTP clients read.
      ctx.set('RetryAfter', wait);
      ctx.set('Retry-After', wait);
      throw new HermodError('rate_limited', `more than ${verdict.limit} requests per second; retry after ${wait} seconds`);
    }
    // SPEC.md sends this body with Content-Type: application/json: one without it is refused, not read as JSON.
    const raw = await readJson(ctx, deps.maxBodyBytes, { named: ['application/json'], headerRequired: true });
    const body = parseMessageRequest(raw);
    await idempotent(ctx, deps.idempotency, caller.applicationId, 'intelligent_messaging', async (dedupKeyOf) => {
      const { id, replayed } = await deps.im.send(toImSendRequest(caller.applicationId, body, dedupKeyOf(0))).catch((err: unknown) => {
        throw namedAsSent(err, raw);
      });
      ctx.status = 202;
      ctx.body = { id };
      markRecovered(ctx, [replayed]);
    });
  });

  return router;
}
