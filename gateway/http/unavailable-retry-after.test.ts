import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../gateway-test-kit';
import { HermodError } from '../../lib/errors';
import { createLogger } from '../../lib/log';
import { intelligentMessagingErrors } from '../intelligent-messaging/error-body';
import { unavailableRetryAfter } from './unavailable-retry-after';

const BASIC = `Basic ${Buffer.from('kāinga:hūnā 🔑').toString('base64')}`;
const json = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { authorization: BASIC, 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const mmsReport = JSON.stringify({ id: 'mms-ōrite-1', status: 'delivered', timestamp: '2025-03-01T02:18:57Z' });

describe('an answer given while core is unavailable', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it.each([
    ['SMS Gateway v2', '/rest/sms/v2/messages', json({ destination: '+64211234567', content: 'Kia ora Ānaru 👋🏽' }), 503],
    ['Gateway v1', '/rest/gateway/messages', json({ destination: ['+64211234567'], content: '你好世界' }), 503],
    ['Campaign Manager', '/rest/campaign_manager/v1/kāinga/templates', { headers: { authorization: BASIC } }, 503],
    ['Campaign Manager healthz (plain text)', '/rest/campaign_manager/v1/healthz', {}, 503],
    // Intelligent Messaging answers every 5xx as 500, the only server error it declares.
    [
      'Intelligent Messaging',
      '/rest/im/v1/message',
      json({ destination: { mobile: '+64211234567' }, message: { type: 'text', text: { body: 'Tēnā koe 🎉' } } }),
      500,
    ],
    [
      'the MMS webhook',
      '/webhooks/mms',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-signature': `sha256=${createHmac('sha256', 'hūnā').update(mmsReport).digest('hex')}` },
        body: mmsReport,
      },
      503,
    ],
  ])('tells the client on %s how many seconds to wait before retrying', async (_name, path, init, status) => {
    const res = await fetch(`${gateway.url}${encodeURI(path)}`, init);
    expect(res.status, await res.clone().text()).toBe(status);
    expect(res.headers.get('retry-after')).toBe('5');
  });

  it('does not tell a client refused for good to retry', async () => {
    const res = await fetch(`${gateway.url}/rest/sms/v2/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('retry-after')).toBeNull();
  });
});

async function answerOf(app: Koa): Promise<Response> {
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  } finally {
    server.close();
  }
}

describe('an answer given when core did not answer in time (504)', () => {
  it('tells an Intelligent Messaging client, answered 500 as every server error there, how many seconds to wait before retrying', async () => {
    // A trial's IM send on a hung Kafka broker was answered 500 "core did not answer in time" with no Retry-After.
    const app = new Koa();
    app.use(unavailableRetryAfter);
    app.use(intelligentMessagingErrors(createLogger()));
    app.use(() => {
      throw new HermodError('timeout', 'core did not answer in time');
    });
    const res = await answerOf(app);
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ code: 500, message: 'core did not answer in time' });
    expect(res.headers.get('retry-after')).toBe('5');
  });

  it('tells the client how many seconds to wait before retrying, as a 503 does', async () => {
    const app = new Koa();
    app.use(unavailableRetryAfter);
    app.use((ctx) => {
      ctx.status = 504;
      ctx.body = { message: 'core did not answer in time' };
    });
    const res = await answerOf(app);
    expect(res.status).toBe(504);
    expect(res.headers.get('retry-after')).toBe('5');
  });
});
