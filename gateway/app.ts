import Koa, { type Middleware } from 'koa';
import type { InterfaceErrors } from './http/header-overflow';
import type { Authenticator } from './auth';
import type { CoreClient } from './core-client';
import type { Logger } from '../lib/log';
import { createOutageLog } from './http/outage-log';
import { interfaceHandler } from './http/interface-handler';
import { requestMetrics } from './http/request-metrics';
import { requestSpan } from './http/request-span';
import { mergeSlashes } from './http/merge-slashes';
import { refusedCredentials } from './http/refused-credentials';
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
import { createSharedRateLimiter, lateRateShares } from './intelligent-messaging/shared-rate-limiter';
import { clientAddress } from './http/client-address';
import { parseTrustedProxies, type TrustedProxies } from '../lib/trusted-proxies';
import { healthProbes } from './http/health-probes';
import { outsideErrors } from './http/outside-errors';
import Router from '@koa/router';

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
  /** The proxies in front of the gateway, whose X-Forwarded-For names the client (none unless given). */
  trustedProxies?: TrustedProxies;
}

interface Interface extends InterfaceErrors {
  name: string;
  handle: Middleware;
}

/** `none`: every path outside the others' prefixes (its metrics label as before it had a renderer). */
type InterfaceName = 'sms_v2' | 'gateway_v1' | 'campaign_manager' | 'intelligent_messaging' | 'webhooks' | 'short_links' | 'none';

/**
 * Each interface's prefix and error renderer, so every failure under its prefix has its shape, inside Koa or before
 * it (header-overflow.ts); the last, prefix '', takes every other path, so none is answered in plain text.
 */
export function interfaceErrors(log: Logger): (InterfaceErrors & { name: InterfaceName })[] {
  const spec = [
    { name: 'sms_v2', prefix: '/rest/sms/v2', errors: smsV2Errors(log) },
    { name: 'gateway_v1', prefix: '/rest/gateway', errors: gatewayV1Errors(log) },
    { name: 'campaign_manager', prefix: '/rest/campaign_manager/v1', errors: campaignManagerErrors(log) },
    { name: 'intelligent_messaging', prefix: '/rest/im/v1', errors: intelligentMessagingErrors(log) },
  ] as const;
  return [
    ...spec,
    { name: 'webhooks', prefix: '/webhooks', errors: webhookErrors(log) },
    { name: 'short_links', prefix: '/l', errors: shortLinkErrors },
    {
      name: 'none',
      prefix: '',
      errors: outsideErrors(
        log,
        spec.map((i) => i.prefix),
      ),
    },
  ];
}

/** The Koa app: one router per interface, each with its own error shape. */
export function createGatewayApp(deps: GatewayDeps): Koa {
  const app = new Koa();
  app.silent = true;
  const routers: Record<InterfaceName, Router> = {
    sms_v2: smsV2Router(deps),
    gateway_v1: gatewayV1Router(deps),
    campaign_manager: campaignManagerRouter(deps),
    intelligent_messaging: intelligentMessagingRouter({
      im: deps.im,
      idempotency: deps.core,
      auth: deps.auth,
      log: deps.log,
      maxBodyBytes: deps.maxBodyBytes,
      rateLimiter: createSharedRateLimiter((applicationId, wanted) => deps.im.takeRateBudget({ applicationId, wanted }), undefined, lateRateShares(deps.log)),
    }),
    webhooks: webhookRouter(deps),
    short_links: shortLinkRouter(deps),
    none: new Router(),
  };
  // One log of outages for every interface: a line while requests are answered 503, not one per request.
  const outages = createOutageLog(deps.log);
  const interfaces: Interface[] = interfaceErrors(deps.log).map((i) => ({ ...i, handle: interfaceHandler(i.errors, routers[i.name], deps.log, outages) }));

  app.use(mergeSlashes);
  app.use(clientAddress(deps.trustedProxies ?? parseTrustedProxies([])));
  app.use(requestMetrics);
  app.use(requestSpan);
  app.use(refusedCredentials(deps.log));
  app.use(healthProbes(deps.campaigns));
  app.use(async (ctx, next) => {
    ctx.set('Strict-Transport-Security', 'max-age=31536000');
    // The last interface's prefix '' takes any path the others do not, a request target that is not a path too
    // (OPTIONS *).
    const match = interfaces.find((i) => ctx.path === i.prefix || ctx.path.startsWith(i.prefix + '/')) ?? interfaces.at(-1)!;
    ctx.state.interface = match.name;
    await match.handle(ctx, next);
  });
  return app;
}
