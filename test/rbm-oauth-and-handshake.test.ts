import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermodWithChannels, type HermodWithChannels } from './support/hermod-with-channels';

/**
 * RCS Business Messaging as Google runs it: hermod signs in with a service
 * account (JWT bearer grant at the key's token_uri, here the simulator's),
 * every API call carries the access token, and the gateway answers RBM's
 * webhook verification handshake.
 */
describe('RBM: OAuth from a service account, and the webhook handshake', () => {
  let h: HermodWithChannels;

  beforeAll(async () => {
    h = await startHermodWithChannels('rbm-oauth');
  }, 90_000);

  afterAll(() => h?.stop());

  it('answers the webhook verification with the secret when RBM presents our client token', async () => {
    expect(await h.rcs.verifyWebhook()).toMatchObject({ verified: true, status: 200 });
  });

  it('refuses the webhook verification with another client token', async () => {
    const answer = await h.rcs.verifyWebhook('not-our-client-token');
    expect(answer).toMatchObject({ verified: false, status: 401 });
  });

  it('sends an RCS message with an access token it got from the service account, and hears it read', async () => {
    const r = await h.client.post('/rest/im/v1/message', {
      destination: { mobile: '+6421700031' },
      message: { type: 'text', text: { body: 'Kia ora, e hoa mā — tēnā koe 👋🏽 你好' } },
      delivery_attempts: [{ channel: 'rcs', event: 'read', timeout: 30 }],
    });
    expect(r.status, r.text).toBe(202);
    const id = r.json.id as string;
    const outcome = await eventually(() => h.callbacks.find((c) => c.body.id === id && c.body.channel === undefined && c.body.status === 'read'), 20_000, 50);
    expect(outcome.body.status).toBe('read');
    expect(h.rcs.received.map((m) => m.text)).toContain('Kia ora, e hoa mā — tēnā koe 👋🏽 你好');
    expect(h.rcs.tokensIssued).toBeGreaterThanOrEqual(1);
    expect(h.rcs.unauthenticated).toBe(0);
  });
});
