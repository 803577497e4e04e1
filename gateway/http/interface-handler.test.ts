import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Koa from 'koa';
import Router from '@koa/router';
import { HermodError } from '../../lib/errors';
import { createLogger } from '../../lib/log';
import { startTestGateway } from '../gateway-test-kit';
import { interfaceHandler } from './interface-handler';

describe('a known path asked with a method it does not take', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it.each([
    ['SMS Gateway v2', '/rest/sms/v2/messages', 'DELETE', 'POST, HEAD, GET', /"statusCode":405/],
    ['Gateway v1', '/rest/gateway/messages', 'PUT', 'POST', /"error":"method_not_allowed"/],
    // Its GET would read `broadcast` as a message id, and answered 400 "messageid must be a positive integer".
    ['Gateway v1 broadcast', '/rest/gateway/messages/broadcast', 'GET', 'POST', /"error":"method_not_allowed"/],
    // The router gave the union of every route the path matches (the message read's GET and HEAD among them).
    ['Gateway v1 broadcast', '/rest/gateway/messages/broadcast', 'PUT', 'POST', /"error":"method_not_allowed"/],
    ['Gateway v1 broadcast', '/rest/gateway/messages/broadcast', 'DELETE', 'POST', /"error":"method_not_allowed"/],
    ['Intelligent Messaging', '/rest/im/v1/message', 'GET', 'POST', /"code":405/],
    ['Campaign Manager', '/rest/campaign_manager/v1/acme/templates', 'DELETE', 'HEAD, GET', /^{"code":405,"message":"method not allowed"}$/],
    // SPEC §7.1: healthz's failures are a plain string, as the list deletes' are.
    ['Campaign Manager healthz', '/rest/campaign_manager/v1/healthz', 'POST', 'HEAD, GET', /^error: method not allowed$/],
  ])('is answered 405 on %s with the Allow header and the interface’s own error body', async (_name, path, method, allow, body) => {
    const res = await fetch(`${gateway.url}${path}`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(await res.text()).toMatch(body);
  });

  it('answers OPTIONS on Gateway v1 broadcast with the one method it takes', async () => {
    const res = await fetch(`${gateway.url}/rest/gateway/messages/broadcast`, { method: 'OPTIONS' });
    expect(res.status).toBe(200);
    expect(res.headers.get('allow')).toBe('POST');
  });
});

describe('an interface whose error renderer answers core being away as 500 (Intelligent Messaging)', () => {
  it('tells the outage log it was an outage, and why', async () => {
    const router = new Router();
    router.post('/send', () => {
      throw new HermodError('timeout', 'core did not answer in time');
    });
    const asFiveHundred = async (ctx: { status: number; body: unknown }, next: () => Promise<unknown>) => {
      try {
        await next();
      } catch {
        ctx.status = 500;
        ctx.body = { code: 500 };
      }
    };
    const told: [number, string | undefined][] = [];
    const app = new Koa();
    app.use(interfaceHandler(asFiveHundred as never, router, createLogger({ test: 'interface-handler' }), { answered: (s, why) => void told.push([s, why]) }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const r = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/send`, { method: 'POST' });
      expect(r.status).toBe(500);
      expect(told).toEqual([[500, 'core did not answer in time']]);
    } finally {
      server.close();
    }
  });
});
