import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { OutboundJob } from '../../../core/messages/bus-payloads';
import type { HttpCarrierConfig } from '../../../lib/config';
import { HermodError } from '../../../lib/errors';
import type { CarrierReport } from '../../carrier';
import { startWebhookReceiver, type WebhookReceiver } from '../../simulators/http-simulator-support';
import { createMmsSimulator, type MmsSimulator } from '../../simulators/mms-simulator';
import { quietLog } from '../../simulators/smpp-test-kit';
import { createMmsCarrier } from './mms-carrier';
import { mmsWebhook } from './mms-webhook';

const TOKEN = 'test-token';
const SECRET = 'test-webhook-secret';

let receiver: WebhookReceiver;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  receiver = await startWebhookReceiver({ tls: true });
});
afterAll(() => receiver.close());
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function simulator(): Promise<MmsSimulator> {
  const sim = createMmsSimulator({ token: TOKEN, webhookSecret: SECRET, webhookUrl: receiver.url, deliverDelayMs: 20 });
  await sim.start();
  stops.push(() => sim.stop());
  return sim;
}

function config(port: number, overrides: Partial<HttpCarrierConfig> = {}): HttpCarrierConfig {
  return { baseUrl: `http://127.0.0.1:${port}`, token: TOKEN, sender: '+15550000000', webhookSecret: SECRET, apiVersion: '', ...overrides };
}

let seq = 0;
function job(destination: string, im?: OutboundJob['im'], content = 'Hello from hermod'): OutboundJob {
  return { id: `msg-${++seq}`, applicationId: 'app', channel: 'mms', destination, source: '', content, acceptedAt: Date.now(), ...(im ? { im } : {}) };
}

function reportsFor(carrierId: string): CarrierReport[] {
  return receiver.received
    .filter((w) => mmsWebhook.verify(w.rawBody, w.headers, SECRET))
    .flatMap((w) => mmsWebhook.parse(JSON.parse(w.rawBody.toString('utf8'))))
    .filter((r) => r.carrierId === carrierId);
}

async function reportsWithin(carrierId: string, count: number, ms = 1500): Promise<CarrierReport[]> {
  const until = Date.now() + ms;
  while (reportsFor(carrierId).length < count) {
    if (Date.now() > until) throw new Error(`expected ${count} reports for ${carrierId}, got ${reportsFor(carrierId).length}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return reportsFor(carrierId);
}

async function sendError(promise: Promise<unknown>): Promise<HermodError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(HermodError);
  return err as HermodError;
}

describe('MMS carrier against the MMS provider simulator', () => {
  it('sends media with its subject and caption from the configured sender and returns the provider id', async () => {
    const sim = await simulator();
    const carrier = createMmsCarrier(config(sim.port), quietLog);
    const media = { mimeType: 'image/png', url: 'https://cdn.example.com/a.png' };
    const { carrierIds } = await carrier.send(job('+64211234561', { type: 'media', media, subject: 'Your ticket' }, 'See attached'));
    expect(sim.received).toEqual([
      { id: carrierIds[0], from: '+15550000000', to: '+64211234561', subject: 'Your ticket', text: 'See attached', media: [{ url: media.url, content_type: 'image/png' }] },
    ]);
  });

  it('sends a text or a rendered template without media, and no text when the content is only the media URL', async () => {
    const sim = await simulator();
    const carrier = createMmsCarrier(config(sim.port), quietLog);
    await carrier.send(job('+64211234561'));
    const template = { id: 't1', name: 'promo', language: 'en', parameters: [] };
    await carrier.send(job('+64211234561', { type: 'template', template }, 'Sale on Friday'));
    const url = 'https://cdn.example.com/v.mp4';
    await carrier.send(job('+64211234561', { type: 'media', media: { mimeType: 'video/mp4', url } }, url));
    expect(sim.received.map(({ text, media }) => ({ text, media: media.length }))).toEqual([
      { text: 'Hello from hermod', media: 0 },
      { text: 'Sale on Friday', media: 0 },
      { text: undefined, media: 1 },
    ]);
  });

  it('posts signed sent and delivered reports that parse to sent and received', async () => {
    const sim = await simulator();
    const carrier = createMmsCarrier(config(sim.port), quietLog);
    const before = Date.now();
    const [id] = (await carrier.send(job('+64211234561'))).carrierIds;
    const reports = await reportsWithin(id!, 2);
    expect(reports.map((r) => r.status)).toEqual(['sent', 'received']);
    expect(reports.every((r) => r.at >= before && r.at <= Date.now() && r.errorCode === '')).toBe(true);
  });

  it('verifies the signature over the exact body and secret, and rejects a missing or garbled header', async () => {
    const sim = await simulator();
    const carrier = createMmsCarrier(config(sim.port), quietLog);
    const [id] = (await carrier.send(job('+64211234561'))).carrierIds;
    await reportsWithin(id!, 1);
    const hook = receiver.received.find((w) => w.rawBody.includes(id!))!;
    expect(mmsWebhook.verify(hook.rawBody, hook.headers, SECRET)).toBe(true);
    expect(mmsWebhook.verify(Buffer.from(hook.rawBody.toString().replace('"sent"', '"delivered"')), hook.headers, SECRET)).toBe(false);
    expect(mmsWebhook.verify(hook.rawBody, hook.headers, 'another-secret')).toBe(false);
    expect(mmsWebhook.verify(hook.rawBody, {}, SECRET)).toBe(false);
    expect(mmsWebhook.verify(hook.rawBody, { 'x-signature': 'sha256=' + 'g'.repeat(64) }, SECRET)).toBe(false);
    expect(mmsWebhook.verify(hook.rawBody, { 'x-signature': (hook.headers['x-signature'] as string).slice(7) }, SECRET)).toBe(false);
  });

  it('reports a number ending in 9 as sent, then failed with the provider\'s error code', async () => {
    const sim = await simulator();
    const carrier = createMmsCarrier(config(sim.port), quietLog);
    const [id] = (await carrier.send(job('+64211234569'))).carrierIds;
    const reports = await reportsWithin(id!, 2);
    expect(reports.map((r) => [r.status, r.errorCode])).toEqual([['sent', ''], ['failed', 'unreachable']]);
  });

  it('turns a bad token into a permanent carrier_rejected', async () => {
    const sim = await simulator();
    const err = await sendError(createMmsCarrier(config(sim.port, { token: 'wrong' }), quietLog).send(job('+64211234561')));
    expect(err).toMatchObject({ code: 'carrier_rejected', retryable: false });
    expect(err.message).toMatch(/401/);
  });

  it('turns an invalid request into carrier_rejected with the provider\'s message', async () => {
    const sim = await simulator();
    const err = await sendError(createMmsCarrier(config(sim.port), quietLog).send(job('0211234561')));
    expect(err.code).toBe('carrier_rejected');
    expect(err.message).toMatch(/400: to must be an E.164 number \(invalid_request\)/);
  });

  it('turns an unreachable provider into a retryable carrier_transient', async () => {
    const sim = await simulator();
    const port = sim.port;
    await sim.stop();
    const err = await sendError(createMmsCarrier(config(port), quietLog).send(job('+64211234561')));
    expect(err).toMatchObject({ code: 'carrier_transient', retryable: true });
  });
});
