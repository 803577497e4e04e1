import { describe, expect, it } from 'vitest';
import type { OutboundJob } from '../../../core/ports/bus-payloads';
import type { RcsCarrierConfig } from '../../../lib/config';
import { createRcsSimulator } from '../../simulators/rcs-simulator';
import { httpCarrierTestKit, imJob, quietLog, sendError, WORLD_TEXT } from '../http/http-carrier-test-kit';
import { createRcsCarrier } from './rcs-carrier';
import { rcsWebhook } from '../../../lib/carrier-webhooks/rcs-webhook';
import { rbmServiceAccount } from './rbm-test-kit';

const CLIENT_TOKEN = 'test-client-token';
const account = rbmServiceAccount();

// Plain HTTP here: the WhatsApp and MMS tests cover HTTPS with a self-signed certificate.
const kit = httpCarrierTestKit({ tls: false, webhook: rcsWebhook, secret: CLIENT_TOKEN });
const { reportsFor, reportsWithin } = kit;
const simulator = async (tokenLifetimeSeconds?: number) => {
  const sim = await kit.simulator((webhookUrl) =>
    createRcsSimulator({ serviceAccount: account, tokenLifetimeSeconds, clientToken: CLIENT_TOKEN, webhookUrl, deliverDelayMs: 20, readDelayMs: 40 }),
  );
  account.pointAt(sim.port);
  return sim;
};
const job = (destination: string, im?: OutboundJob['im'], content?: string) => imJob('rcs', destination, im, content);

function config(port: number, overrides: Partial<RcsCarrierConfig> = {}): RcsCarrierConfig {
  return {
    baseUrl: `http://localhost:${port}/`,
    serviceAccount: account.file,
    sender: 'hermod-agent',
    webhookSecret: CLIENT_TOKEN,
    apiVersion: '',
    ...overrides,
  };
}

describe('RCS carrier against the RBM simulator', () => {
  it("sends a text as an agent message under hermod's message id, which becomes the carrier id", async () => {
    const sim = await simulator();
    const carrier = createRcsCarrier(config(sim.port), quietLog);
    const j = job('+64211234561');
    expect(await carrier.send(j)).toEqual({ carrierIds: [j.id] });
    expect(sim.received).toEqual([{ messageId: j.id, agentId: 'hermod-agent', phone: '+64211234561', text: WORLD_TEXT }]);
  });

  it('sends media as a file and a template as its rendered text', async () => {
    const sim = await simulator();
    const carrier = createRcsCarrier(config(sim.port), quietLog);
    const url = 'https://cdn.example.com/a.jpg';
    await carrier.send(job('+64211234561', { type: 'media', media: { mimeType: 'image/jpeg', url } }, url));
    const template = { id: 't1', name: 'order_shipped', language: 'en', parameters: [{ name: 'order', text: 'Заказ-17' }] };
    await carrier.send(job('+64211234561', { type: 'template', template }, 'Kua tukuna Заказ-17 — 已发货 📦'));
    expect(sim.received.map(({ fileUrl, text }) => ({ fileUrl, text }))).toEqual([
      { fileUrl: url, text: undefined },
      { fileUrl: undefined, text: 'Kua tukuna Заказ-17 — 已发货 📦' },
    ]);
  });

  it('posts signed DELIVERED and READ events that parse to received and read', async () => {
    const sim = await simulator();
    const carrier = createRcsCarrier(config(sim.port), quietLog);
    const before = Date.now();
    const [id] = (await carrier.send(job('+64211234561'))).carrierIds;
    const reports = await reportsWithin(id!, 2);
    expect(reports.map((r) => r.status)).toEqual(['received', 'read']);
    expect(reports.every((r) => r.at >= before && r.at <= Date.now() && r.errorCode === '')).toBe(true);
  });

  it('verifies the signature with the client token and rejects tampered data, a wrong token or a bad header', async () => {
    const sim = await simulator();
    const carrier = createRcsCarrier(config(sim.port), quietLog);
    const [id] = (await carrier.send(job('+64211234561'))).carrierIds;
    await reportsWithin(id!, 1);
    const hook = kit.receiver().received.find((w) => rcsWebhook.parse(JSON.parse(w.rawBody.toString('utf8')))[0]?.carrierId === id)!;
    expect(hook.headers['x-goog-signature']).toMatch(/^[A-Za-z0-9+/]{86}==$/);
    expect(rcsWebhook.verify(hook.rawBody, hook.headers, CLIENT_TOKEN)).toBe(true);
    const envelope = JSON.parse(hook.rawBody.toString('utf8')) as { message: { data: string } };
    const event = Buffer.from(envelope.message.data, 'base64').toString('utf8').replace('DELIVERED', 'READ');
    const tampered = Buffer.from(JSON.stringify({ ...envelope, message: { ...envelope.message, data: Buffer.from(event).toString('base64') } }));
    expect(rcsWebhook.verify(tampered, hook.headers, CLIENT_TOKEN)).toBe(false);
    expect(rcsWebhook.verify(hook.rawBody, hook.headers, 'another-token')).toBe(false);
    expect(rcsWebhook.verify(hook.rawBody, {}, CLIENT_TOKEN)).toBe(false);
    expect(rcsWebhook.verify(hook.rawBody, { 'x-goog-signature': 'not base64!' }, CLIENT_TOKEN)).toBe(false);
    expect(rcsWebhook.verify(hook.rawBody, { 'x-goog-signature': Buffer.alloc(32).toString('base64') }, CLIENT_TOKEN)).toBe(false);
  });

  it('reports a phone ending in 0 as delivered but never read', async () => {
    const sim = await simulator();
    const carrier = createRcsCarrier(config(sim.port), quietLog);
    const [id] = (await carrier.send(job('+64211234560'))).carrierIds;
    await reportsWithin(id!, 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(reportsFor(id!).map((r) => r.status)).toEqual(['received']);
  });

  it('rejects a phone ending in 9 for not taking RCS, permanently', async () => {
    const sim = await simulator();
    const carrier = createRcsCarrier(config(sim.port), quietLog);
    const err = await sendError(carrier.send(job('+64211234569')));
    expect(err.code).toBe('carrier_rejected');
    expect(err.message).toMatch(/cannot take RCS.*NOT_FOUND/);
    expect(sim.received).toEqual([]);
  });

  it('treats a resend that RBM already has (409) as sent, so a retry after a lost answer is safe', async () => {
    const sim = await simulator();
    const carrier = createRcsCarrier(config(sim.port), quietLog);
    const j = job('+64211234561');
    await carrier.send(j);
    expect(await carrier.send(j)).toEqual({ carrierIds: [j.id] });
    expect(sim.received).toHaveLength(1);
  });

  it('signs in with the service account once and reuses the access token while it lasts', async () => {
    const sim = await simulator();
    const carrier = createRcsCarrier(config(sim.port), quietLog);
    for (const phone of ['+64211234561', '+64211234562', '+64211234563']) await carrier.send(job(phone));
    expect(sim.received).toHaveLength(3);
    expect(sim.tokensIssued).toBe(1);
    expect(sim.unauthenticated).toBe(0);
  });

  it('fetches a new access token before the old one expires', async () => {
    const sim = await simulator(2);
    // Tokens last 2 s here; a new one is fetched when less than 1.5 s is left.
    const carrier = createRcsCarrier(config(sim.port), quietLog, { refreshBeforeMs: 1500 });
    await carrier.send(job('+64211234561'));
    await new Promise((r) => setTimeout(r, 700));
    await carrier.send(job('+64211234562'));
    expect(sim.tokensIssued).toBe(2);
    expect(sim.unauthenticated).toBe(0);
    expect(sim.received).toHaveLength(2);
  });

  it('gets a new access token and sends once more when RBM answers 401 to an expired one', async () => {
    const sim = await simulator(1);
    // Refreshing only at the last moment: the token expires at RBM while hermod still holds it.
    const carrier = createRcsCarrier(config(sim.port), quietLog, { refreshBeforeMs: -5000 });
    await carrier.send(job('+64211234561'));
    await new Promise((r) => setTimeout(r, 1100));
    const j = job('+64211234562');
    expect(await carrier.send(j)).toEqual({ carrierIds: [j.id] });
    expect(sim.unauthenticated).toBe(1);
    expect(sim.tokensIssued).toBe(2);
    expect(sim.received.map((m) => m.phone)).toEqual(['+64211234561', '+64211234562']);
  });

  it('refuses the send permanently when the token endpoint does not know the key', async () => {
    const sim = await simulator();
    const stranger = rbmServiceAccount();
    stranger.pointAt(sim.port);
    const err = await sendError(createRcsCarrier(config(sim.port, { serviceAccount: stranger.file }), quietLog).send(job('+64211234561')));
    expect(err).toMatchObject({ code: 'carrier_rejected', retryable: false });
    expect(err.message).toMatch(/token endpoint refused the service account \(HTTP 400\).*invalid_grant/);
    expect(sim.received).toEqual([]);
  });

  it('names the missing key file when no service account is configured', async () => {
    const sim = await simulator();
    const err = await sendError(createRcsCarrier(config(sim.port, { serviceAccount: '' }), quietLog).send(job('+64211234561')));
    expect(err).toMatchObject({ code: 'carrier_rejected' });
    expect(err.message).toMatch(/HERMOD_RCS_SERVICE_ACCOUNT is not set/);
  });

  it('turns an unreachable API into a retryable carrier_transient', async () => {
    const sim = await simulator();
    const port = sim.port;
    await sim.stop();
    const err = await sendError(createRcsCarrier(config(port), quietLog).send(job('+64211234561')));
    expect(err).toMatchObject({ code: 'carrier_transient', retryable: true });
  });
});
