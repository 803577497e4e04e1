import { describe, expect, it } from 'vitest';
import type { OutboundJob } from '../../../core/ports/bus-payloads';
import type { HttpCarrierConfig } from '../../../lib/config';
import { createWhatsAppSimulator } from '../../simulators/whatsapp-simulator';
import { httpCarrierTestKit, imJob, quietLog, sendError, WORLD_TEXT } from '../http/http-carrier-test-kit';
import { createWhatsAppCarrier } from './whatsapp-carrier';
import { whatsAppWebhook } from '../../../lib/carrier-webhooks/whatsapp-webhook';

const TOKEN = 'test-token';
const APP_SECRET = 'test-app-secret';

const kit = httpCarrierTestKit({ tls: true, webhook: whatsAppWebhook, secret: APP_SECRET });
const { reportsFor, reportsWithin } = kit;
const simulator = () =>
  kit.simulator((webhookUrl) => createWhatsAppSimulator({ token: TOKEN, appSecret: APP_SECRET, webhookUrl, deliverDelayMs: 20, readDelayMs: 40 }));
const job = (destination: string, im?: OutboundJob['im'], content?: string) => imJob('wab', destination, im, content);

function config(port: number, overrides: Partial<HttpCarrierConfig> = {}): HttpCarrierConfig {
  return { baseUrl: `http://localhost:${port}`, token: TOKEN, sender: '100000000000001', webhookSecret: APP_SECRET, apiVersion: 'v21.0', ...overrides };
}

describe('WhatsApp carrier against the Cloud API simulator', () => {
  it('sends a text as a Cloud API text message to the number without its plus and returns the wamid', async () => {
    const sim = await simulator();
    const carrier = createWhatsAppCarrier(config(sim.port), quietLog);
    const { carrierIds } = await carrier.send(job('+64211234561'));
    expect(carrierIds).toHaveLength(1);
    expect(carrierIds[0]).toMatch(/^wamid\./);
    expect(sim.received).toEqual([
      { id: carrierIds[0], phoneNumberId: '100000000000001', to: '64211234561', type: 'text', text: { body: WORLD_TEXT, preview_url: false } },
    ]);
  });

  it('sends media with the kind its MIME type names, captioned only by a real text', async () => {
    const sim = await simulator();
    const carrier = createWhatsAppCarrier(config(sim.port), quietLog);
    const url = 'https://cdn.example.com/file';
    await carrier.send(job('+64211234561', { type: 'media', media: { mimeType: 'image/jpeg', url } }, 'Titiro ki tēnei — 看这个 👀'));
    await carrier.send(job('+64211234561', { type: 'media', media: { mimeType: 'video/mp4', url } }, url));
    await carrier.send(job('+64211234561', { type: 'media', media: { mimeType: 'audio/ogg', url } }, 'Аудио без подписи 🎧'));
    await carrier.send(job('+64211234561', { type: 'media', media: { mimeType: 'application/pdf', url } }, url));
    expect(sim.received.map((m) => [m.type, m.media])).toEqual([
      ['image', { link: url, caption: 'Titiro ki tēnei — 看这个 👀' }],
      ['video', { link: url }],
      ['audio', { link: url }],
      ['document', { link: url }],
    ]);
  });

  it('sends a template by name and language with its named body parameters', async () => {
    const sim = await simulator();
    const carrier = createWhatsAppCarrier(config(sim.port), quietLog);
    const template = {
      id: 't1',
      name: 'order_shipped',
      language: 'en_US',
      parameters: [
        { name: 'order', text: 'Заказ-17' },
        { name: 'eta', text: 'Rāmere 星期五 📦' },
      ],
    };
    await carrier.send(job('+64211234561', { type: 'template', template }, 'Ka tae mai Заказ-17 hei te Rāmere 星期五 📦'));
    expect(sim.received[0]).toMatchObject({
      type: 'template',
      template: {
        name: 'order_shipped',
        language: { code: 'en_US' },
        components: [
          {
            type: 'body',
            parameters: [
              { type: 'text', parameter_name: 'order', text: 'Заказ-17' },
              { type: 'text', parameter_name: 'eta', text: 'Rāmere 星期五 📦' },
            ],
          },
        ],
      },
    });
  });

  it('posts signed sent, delivered and read webhooks that parse to sent, received and read', async () => {
    const sim = await simulator();
    const carrier = createWhatsAppCarrier(config(sim.port), quietLog);
    const before = Date.now() - 1000;
    const [id] = (await carrier.send(job('+64211234561'))).carrierIds;
    const reports = await reportsWithin(id!, 3);
    expect(reports.map((r) => r.status)).toEqual(['sent', 'received', 'read']);
    for (const r of reports) {
      expect(r.errorCode).toBe('');
      expect(r.at).toBeGreaterThanOrEqual(before - (before % 1000));
      expect(r.at).toBeLessThanOrEqual(Date.now());
    }
  });

  it('verifies the signature over the exact body and secret, and rejects a missing or garbled header', async () => {
    const sim = await simulator();
    const carrier = createWhatsAppCarrier(config(sim.port), quietLog);
    const [id] = (await carrier.send(job('+64211234561'))).carrierIds;
    await reportsWithin(id!, 1);
    const hook = kit.receiver().received.find((w) => w.rawBody.includes(id!))!;
    expect(hook.headers['x-hub-signature-256']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(whatsAppWebhook.verify(hook.rawBody, hook.headers, APP_SECRET)).toBe(true);
    const tampered = Buffer.from(hook.rawBody.toString('utf8').replace('"sent"', '"read"'));
    expect(whatsAppWebhook.verify(tampered, hook.headers, APP_SECRET)).toBe(false);
    expect(whatsAppWebhook.verify(hook.rawBody, hook.headers, 'another-secret')).toBe(false);
    expect(whatsAppWebhook.verify(hook.rawBody, hook.headers, '')).toBe(false);
    expect(whatsAppWebhook.verify(hook.rawBody, {}, APP_SECRET)).toBe(false);
    expect(whatsAppWebhook.verify(hook.rawBody, { 'x-hub-signature-256': 'sha256=zz' }, APP_SECRET)).toBe(false);
    expect(whatsAppWebhook.verify(hook.rawBody, { 'x-hub-signature-256': 'sha1=' + 'a'.repeat(40) }, APP_SECRET)).toBe(false);
    const signature = hook.headers['x-hub-signature-256'] as string;
    expect(whatsAppWebhook.verify(hook.rawBody, { 'X-Hub-Signature-256': signature }, APP_SECRET)).toBe(true);
    expect(whatsAppWebhook.verify(hook.rawBody, { 'x-hub-signature-256': [signature, signature] }, APP_SECRET)).toBe(false);
  });

  it('reports a number ending in 0 as delivered but never read', async () => {
    const sim = await simulator();
    const carrier = createWhatsAppCarrier(config(sim.port), quietLog);
    const [id] = (await carrier.send(job('+64211234560'))).carrierIds;
    await reportsWithin(id!, 2);
    await new Promise((r) => setTimeout(r, 100));
    expect(reportsFor(id!).map((r) => r.status)).toEqual(['sent', 'received']);
  });

  it('reports a number ending in 9 as failed with error 131026', async () => {
    const sim = await simulator();
    const carrier = createWhatsAppCarrier(config(sim.port), quietLog);
    const [id] = (await carrier.send(job('+64211234569'))).carrierIds;
    const reports = await reportsWithin(id!, 1);
    expect(reports).toEqual([expect.objectContaining({ carrierId: id, status: 'failed', errorCode: '131026' })]);
  });

  it('accepts a number ending in 8 and never reports on it', async () => {
    const sim = await simulator();
    const carrier = createWhatsAppCarrier(config(sim.port), quietLog);
    const [id] = (await carrier.send(job('+64211234568'))).carrierIds;
    await new Promise((r) => setTimeout(r, 120));
    expect(sim.received).toHaveLength(1);
    expect(reportsFor(id!)).toEqual([]);
  });

  it('retries a webhook the receiver refused', async () => {
    const sim = await simulator();
    const carrier = createWhatsAppCarrier(config(sim.port), quietLog);
    const refusedBefore = kit.receiver().refused;
    kit.receiver().refuseNext(1);
    const [id] = (await carrier.send(job('+64211234561'))).carrierIds;
    expect((await reportsWithin(id!, 3)).map((r) => r.status)).toEqual(['sent', 'received', 'read']);
    expect(kit.receiver().refused).toBe(refusedBefore + 1);
  });

  it('turns a bad token into a permanent carrier_rejected', async () => {
    const sim = await simulator();
    const carrier = createWhatsAppCarrier(config(sim.port, { token: 'wrong' }), quietLog);
    const err = await sendError(carrier.send(job('+64211234561')));
    expect(err.code).toBe('carrier_rejected');
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/401.*code 190/);
    expect(sim.received).toEqual([]);
  });

  it('turns an invalid request into carrier_rejected with the Graph message', async () => {
    const sim = await simulator();
    const carrier = createWhatsAppCarrier(config(sim.port), quietLog);
    const err = await sendError(carrier.send(job('not-a-number')));
    expect(err.code).toBe('carrier_rejected');
    expect(err.message).toMatch(/400.*Invalid parameter: to.*code 100/);
  });

  it('turns an unreachable API into a retryable carrier_transient', async () => {
    const sim = await simulator();
    const port = sim.port;
    await sim.stop();
    const carrier = createWhatsAppCarrier(config(port), quietLog);
    const err = await sendError(carrier.send(job('+64211234561')));
    expect(err.code).toBe('carrier_transient');
    expect(err.retryable).toBe(true);
  });
});
