import type { AddressInfo } from 'node:net';
import http from 'node:http';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import type { CampaignsClient } from '../campaigns-client';
import type { Authenticator } from '../auth';
import { HermodError } from '../../lib/errors';
import { createLogger } from '../../lib/log';
import { campaignManagerErrors } from './error-body';
import { campaignManagerRouter } from './routes';
import type { IdempotencyStore } from '../http/idempotency';

async function serve(health: CampaignsClient['health']) {
  const log = createLogger();
  const campaigns = { health } as unknown as CampaignsClient;
  const auth = {
    authenticate: async () => {
      throw new HermodError('unauthorized', 'no');
    },
  } as unknown as Authenticator;
  const router = campaignManagerRouter({
    campaigns,
    core: {} as unknown as IdempotencyStore,
    auth,
    log,
    maxBodyBytes: 1024,
    maxImportBytes: 1024,
    scheduleHorizonMs: 60 * 86_400_000,
  });
  const app = new Koa();
  app.use(campaignManagerErrors(log));
  app.use(router.routes());
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rest/campaign_manager/v1/healthz` };
}

describe('Campaign Manager health', () => {
  let server: http.Server | undefined;
  afterEach(() => server?.close());

  it('answers 200 OK in plain text while history answers', async () => {
    const s = await serve(async () => ({ ok: true, detail: 'ok' }));
    server = s.server;
    const r = await fetch(s.url);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await r.text()).toBe('OK');
  });

  it('answers 500 in plain text when history is down', async () => {
    const s = await serve(async () => ({ ok: false, detail: 'history unavailable: connection refused' }));
    server = s.server;
    const r = await fetch(s.url);
    expect(r.status).toBe(500);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await r.text()).toBe('error: history unavailable: connection refused');
  });

  it('answers 500 in plain text when core cannot be reached', async () => {
    const s = await serve(async () => {
      throw new HermodError('unavailable', 'core is unavailable');
    });
    server = s.server;
    const r = await fetch(s.url);
    expect(r.status).toBe(500);
    expect(await r.text()).toBe('error: core is unavailable');
  });
});
