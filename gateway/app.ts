import Koa from 'koa';
import type { Authenticator } from './auth';
import type { CoreClient } from './core-client';
import type { Logger } from '../lib/log';
import { requestMetrics } from './http/request-metrics';
import { smsV2Router } from './sms-v2/routes';

export interface GatewayDeps {
  core: CoreClient;
  auth: Authenticator;
  log: Logger;
  maxBodyBytes: number;
}

/** The Koa app: one router per interface, each with its own error shape. */
export function createGatewayApp(deps: GatewayDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  app.use(requestMetrics);
  app.use(async (ctx, next) => {
    await next();
    ctx.set('Strict-Transport-Security', 'max-age=31536000');
  });
  const v2 = smsV2Router(deps);
  app.use(v2.routes());
  app.use(v2.allowedMethods());
  app.use(async (ctx) => {
    ctx.status = 404;
    ctx.type = 'text/plain';
    ctx.body = 'not found\n';
  });
  return app;
}
