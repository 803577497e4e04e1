import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../gateway-test-kit';

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
