import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../gateway-test-kit';

describe('a path with repeated slashes', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway?.close());

  it("is answered by the interface it names, in that interface's error shape (a base URL ending in / joined to /rest/…)", async () => {
    for (const path of ['//rest/sms/v2/messages', '/rest//sms/v2///messages?id=1', '//rest/gateway/messages']) {
      const r = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(r.status, path).toBe(401);
      expect(r.headers.get('content-type'), path).toMatch(/^application\/json/);
    }
  });

  it("is answered in that interface's shape by the answers made before the app too: a head over the limit (431)", async () => {
    const r = await fetch(`${gateway.url}//rest/sms/v2/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-padding': 'a'.repeat(20_000) },
      body: '{}',
    });
    expect(r.status).toBe(431);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('still answers a path outside every interface 404', async () => {
    const r = await fetch(`${gateway.url}//nowhere//at-all`);
    expect(r.status).toBe(404);
  });
});
