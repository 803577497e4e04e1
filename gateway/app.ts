import Koa, { type Middleware } from 'koa';
import type Router from '@koa/router';
import type { Authenticator } from './auth';
import type { CoreClient } from './core-client';
import type { Logger } from '../lib/log';
import { interfaceHandler } from './http/interface-handler';
import { requestMetrics } from './http/request-metrics';
import { requestSpan } from './http/request-span';
import { smsV2Errors } from './sms-v2/error-body';
import { smsV2Router } from './sms-v2/routes';
import { gatewayV1Errors } from './gateway-v1/error-body';
import { gatewayV1Router } from './gateway-v1/routes';
import { shortLinkErrors, shortLinkRouter } from './links/routes';
import type { CampaignsClient } from './campaigns-client';
import { campaignManagerErrors } from './campaign-manager/error-body';
import { campaignManagerRouter } from './campaign-manager/routes';
import type { ImClient } from './im-client';
import type { HttpCarrierConfig } from '../lib/config';
import { webhookErrors, webhookRouter } from './webhooks/routes';
import { intelligentMessagingErrors } from './intelligent-messaging/error-body';
import { intelligentMessagingRouter } from './intelligent-messaging/routes';
import { createSharedRateLimiter } from './intelligent-messaging/shared-rate-limiter';

export interface GatewayDeps {
  core: CoreClient;
  auth: Authenticator;
  log: Logger;
  maxBodyBytes: number;
  campaigns: CampaignsClient;
  /** Largest Campaign Manager list or campaign body. */
  maxImportBytes: number;
  im: ImClient;
  /** The HTTP carriers, for verifying their webhooks. */
  carriers: Record<'wab' | 'rcs' | 'mms', Pick<HttpCarrierConfig, 'webhookSecret'>>;
  /** How far ahead v1/v2 messages and campaigns may be scheduled. */
  scheduleHorizonMs: number;
}

interface Interface {
  name: string;
  prefix: string;
  handle: Middleware;
}

/** One interface: its error renderer wraps its router, so every failure under its prefix has its shape. */
function mountInterface(name: string, prefix: string, errors: Middleware, router: Router): Interface {
  return { name, prefix, handle: interfaceHandler(errors, router) };
}

/** The Koa app: one router per interface, each with its own error shape. */
export function createGatewayApp(deps: GatewayDeps): Koa {
  const app = new Koa();
  app.silent = true;
  const interfaces: Interface[] = [
    mountInterface('sms_v2', '/rest/sms/v2', smsV2Errors(deps.log), smsV2Router(deps)),
    mountInterface('gateway_v1', '/rest/gateway', gatewayV1Errors(deps.log), gatewayV1Router(deps)),
    mountInterface('campaign_manager', '/rest/campaign_manager/v1', campaignManagerErrors(deps.log), campaignManagerRouter(deps)),
    mountInterface(
      'intelligent_messaging',
      '/rest/im/v1',
      intelligentMessagingErrors(deps.log),
      intelligentMessagingRouter({
        im: deps.im,
        idempotency: deps.core,
        auth: deps.auth,
        log: deps.log,
        maxBodyBytes: deps.maxBodyBytes,
        rateLimiter: createSharedRateLimiter((applicationId, wanted) => deps.im.takeRateBudget({ applicationId, wanted })),
      }),
    ),
    mountInterface('webhooks', '/webhooks', webhookErrors(deps.log), webhookRouter(deps)),
    mountInterface('short_links', '/l', shortLinkErrors, shortLinkRouter(deps)),
  ];

  app.use(requestMetrics);
  app.use(requestSpan);
  app.use(async (ctx, next) => {
    ctx.set('Strict-Transport-Security', 'max-age=31536000');
    const match = interfaces.find((i) => ctx.path === i.prefix || ctx.path.startsWith(i.prefix + '/'));
    if (!match) {
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = 'not found\n';
      return;
    }
    ctx.state.interface = match.name;
    await match.handle(ctx, next);
  });
  return app;
}
