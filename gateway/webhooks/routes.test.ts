import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../gateway-test-kit';

/** The client token gatewayTestDeps gives every channel, and the secret RBM asks to be echoed. */
const CLIENT_TOKEN = 'hūnā';
const SECRET = 'Kia ora — 你好 👋🏽';

describe('a carrier webhook sent compressed', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  const post = (channel: string, body: Buffer, encoding: string) =>
    fetch(`${gateway.url}/webhooks/${channel}`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body });

  it.each(['wab', 'rcs', 'mms'])('is refused on %s with 415 and Accept-Encoding: identity, not as a bad signature', async (channel) => {
    const res = await post(channel, gzipSync(JSON.stringify({ clientToken: CLIENT_TOKEN, secret: SECRET, text: 'Tēnā koe 你好世界 🎉' })), 'gzip');
    expect(res.status).toBe(415);
    expect(res.headers.get('accept-encoding')).toBe('identity');
    expect(await res.text()).toBe('Content-Encoding gzip is not supported: send the body uncompressed\n');
  });

  it('is read as it always was when labelled Content-Encoding: identity: RBM’s verification is answered with its secret', async () => {
    const res = await post('rcs', Buffer.from(JSON.stringify({ clientToken: CLIENT_TOKEN, secret: SECRET })), 'identity');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(SECRET);
  });
});

describe('RBM’s client-token verification', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it('is refused with a wrong client token by saying the client token does not match, not the signature', async () => {
    const res = await fetch(`${gateway.url}/webhooks/rcs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientToken: 'hē-tōkena', secret: SECRET }),
    });
    expect(res.status).toBe(401);
    const text = await res.text();
    expect(text).toBe('RBM client token does not match the configured one (HERMOD_RCS_WEBHOOK_SECRET)\n');
    expect(text).not.toContain(SECRET);
  });
});
