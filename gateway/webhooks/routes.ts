import { timingSafeEqual } from 'node:crypto';
import { nestsDeeperThan } from '../http/json-depth';
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { ImClient } from '../im-client';
import type { HttpCarrierConfig } from '../../lib/config';
import { HermodError, toHermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { CARRIER_WEBHOOKS, type WebhookChannel } from '../../lib/carrier-webhooks/carrier-webhooks';
import { checkIdentityEncoding } from '../http/identity-encoding';

/** Largest webhook body a carrier may send. */
const MAX_BYTES = 1024 * 1024;

/**
 * Carriers' webhooks: `POST /webhooks/{wab|rcs|mms}`. The signature over
 * the raw body is checked with the channel's secret, the body parsed by the
 * carrier's own module, and its delivery reports handed to core, which
 * records them (duplicates and late ones change nothing, statuses only move
 * forward), and its handsets' messages (WhatsApp) too, which core takes as
 * replies. Answered 200 once core has them, so a carrier retries otherwise.
 * WhatsApp's subscription handshake (GET with hub.challenge) and RBM's
 * client-token verification (an unsigned POST) are answered too.
 */
export function webhookRouter(deps: { im: ImClient; log: Logger; carriers: Record<WebhookChannel, Pick<HttpCarrierConfig, 'webhookSecret'>> }): Router {
  const router = new Router({ prefix: '/webhooks' });
  const channelOf = (ctx: Context): WebhookChannel => {
    const channel = ctx.params.channel as WebhookChannel;
    if (!Object.hasOwn(CARRIER_WEBHOOKS, channel)) throw new HermodError('not_found', `no webhook for ${ctx.params.channel}`);
    return channel;
  };

  router.get('/:channel', (ctx) => {
    const channel = channelOf(ctx);
    const mode = ctx.query['hub.mode'];
    const token = ctx.query['hub.verify_token'];
    if (channel !== 'wab' || mode !== 'subscribe' || !sameSecret(token, deps.carriers.wab.webhookSecret))
      throw new HermodError('forbidden', 'verification refused');
    ctx.type = 'text/plain';
    ctx.body = String(ctx.query['hub.challenge'] ?? '');
  });

  router.post('/:channel', async (ctx) => {
    const channel = channelOf(ctx);
    // Otherwise a compressed body is refused as a bad signature or as not JSON, which misleads whoever debugs the integration.
    checkIdentityEncoding(ctx);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BYTES) throw new HermodError('body_too_large', 'webhook body too large');
      chunks.push(chunk);
    }
    const raw = Buffer.concat(chunks);
    const handler = CARRIER_WEBHOOKS[channel];
    const secret = deps.carriers[channel].webhookSecret;
    const body = parseJson(raw);
    const handshake = body === undefined ? undefined : handler.handshake?.(body, secret);
    if (handshake !== undefined && 'refused' in handshake) throw new HermodError('unauthorized', handshake.refused);
    if (handshake !== undefined) {
      deps.log.info('webhook verified by the carrier', { channel });
      ctx.status = 200;
      ctx.type = 'text/plain';
      ctx.body = handshake.answer;
      return;
    }
    if (!handler.verify(raw, ctx.headers, secret)) throw new HermodError('unauthorized', 'webhook signature does not match');
    if (body === undefined) throw new HermodError('invalid_json', 'webhook body is not JSON');
    const reports = handler.parse(body);
    // Handsets' messages first: a reply and the read it implies arrive in one webhook, and the reply is what must not be lost.
    const inbound = handler.inbound?.(body) ?? [];
    if (inbound.length > 0) await deps.im.reportInbound({ channel, messages: inbound });
    if (reports.length > 0) {
      await deps.im.reportCarrierEvents({
        channel,
        events: reports.map((r) => ({ carrierId: r.carrierId, status: r.status, at: r.at, errorCode: r.errorCode, detail: r.detail ?? '' })),
      });
    }
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = { received: reports.length + inbound.length };
  });
  return router;
}

/** Carriers read only the status code; the text helps whoever debugs the integration. */
export function webhookErrors(log: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new HermodError('not_found', 'no such webhook');
    } catch (err) {
      const e = toHermodError(err);
      if (e.code === 'internal' || e.code === 'unauthorized') log.warn('webhook refused', { path: ctx.path, reason: e.message });
      ctx.status = e.httpStatus;
      ctx.type = 'text/plain';
      ctx.body = e.code === 'internal' ? 'error\n' : `${e.message}\n`;
    }
  };
}

/** The body as JSON, or undefined: not JSON, or nested so deep that parsing it would hold up every request (read before the signature is checked). */
function parseJson(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  if (nestsDeeperThan(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Constant-time; a channel without a configured secret verifies nothing. */
function sameSecret(given: unknown, secret: string): boolean {
  if (!secret || typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}
