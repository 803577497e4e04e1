import { describe, expect, it } from 'vitest';
import type { OutboundJob } from '../../../core/ports/bus-payloads';
import type { HttpCarrierConfig } from '../../../lib/config';
import { createMmsSimulator } from '../../simulators/mms-simulator';
import { httpCarrierTestKit, imJob, quietLog, sendError, WORLD_TEXT } from '../http/http-carrier-test-kit';
import { createMmsCarrier } from './mms-carrier';
import { UnansweredRequestError } from '../http/unanswered-request-error';
import { eventually } from '../../../test/support/eventually';
import { mmsWebhook } from '../../../lib/carrier-webhooks/mms-webhook';

const TOKEN = 'test-token';
const SECRET = 'test-webhook-secret';

const kit = httpCarrierTestKit({ tls: true, webhook: mmsWebhook, secret: SECRET });
const { reportsWithin } = kit;
const simulator = () => kit.simulator((webhookUrl) => createMmsSimulator({ token: TOKEN, webhookSecret: SECRET, webhookUrl, deliverDelayMs: 20 }));
const job = (destination: string, im?: OutboundJob['im'], content?: string) => imJob('mms', destination, im, content);

function config(port: number, overrides: Partial<HttpCarrierConfig> = {}): HttpCarrierConfig {
  return { baseUrl: `http://localhost:${port}`, token: TOKEN, sender: '+15550000000', webhookSecret: SECRET, apiVersion: '', ...overrides };
}

describe('MMS carrier against the MMS provider simulator', () => {
  it('sends media with its subject and caption from the configured sender and returns the provider id', async () => {
    const sim = await simulator();
    const carrier = createMmsCarrier(config(sim.port), quietLog);
    const media = { mimeType: 'image/png', url: 'https://cdn.example.com/a.png' };
    const sent = job('+64211234561', { type: 'media', media, subject: 'Tō tīkiti — ваш билет 🎫' }, 'Kei te tāpiri — 见附件 📎');
    const { carrierIds } = await carrier.send(sent);
    expect(sim.received).toEqual([
      {
        id: carrierIds[0],
        client_ref: sent.id,
        from: '+15550000000',
        to: '+64211234561',
        subject: 'Tō tīkiti — ваш билет 🎫',
        text: 'Kei te tāpiri — 见附件 📎',
        media: [{ url: media.url, content_type: 'image/png' }],
      },
    ]);
  });

  it('sends a text or a rendered template without media, and no text when the content is only the media URL', async () => {
    const sim = await simulator();
    const carrier = createMmsCarrier(config(sim.port), quietLog);
    await carrier.send(job('+64211234561'));
    const template = { id: 't1', name: 'promo', language: 'en', parameters: [] };
    await carrier.send(job('+64211234561', { type: 'template', template }, 'Hoko i te Rāmere — 周五特卖 🎉'));
    const url = 'https://cdn.example.com/v.mp4';
    await carrier.send(job('+64211234561', { type: 'media', media: { mimeType: 'video/mp4', url } }, url));
    expect(sim.received.map(({ text, media }) => ({ text, media: media.length }))).toEqual([
      { text: WORLD_TEXT, media: 0 },
      { text: 'Hoko i te Rāmere — 周五特卖 🎉', media: 0 },
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
    const hook = kit.receiver().received.find((w) => w.rawBody.includes(id!))!;
    expect(mmsWebhook.verify(hook.rawBody, hook.headers, SECRET)).toBe(true);
    expect(mmsWebhook.verify(Buffer.from(hook.rawBody.toString().replace('"sent"', '"delivered"')), hook.headers, SECRET)).toBe(false);
    expect(mmsWebhook.verify(hook.rawBody, hook.headers, 'another-secret')).toBe(false);
    expect(mmsWebhook.verify(hook.rawBody, {}, SECRET)).toBe(false);
    expect(mmsWebhook.verify(hook.rawBody, { 'x-signature': 'sha256=' + 'g'.repeat(64) }, SECRET)).toBe(false);
    expect(mmsWebhook.verify(hook.rawBody, { 'x-signature': (hook.headers['x-signature'] as string).slice(7) }, SECRET)).toBe(false);
  });

  it("reports a number ending in 9 as sent, then failed with the provider's error code", async () => {
    const sim = await simulator();
    const carrier = createMmsCarrier(config(sim.port), quietLog);
    const [id] = (await carrier.send(job('+64211234569'))).carrierIds;
    const reports = await reportsWithin(id!, 2);
    expect(reports.map((r) => [r.status, r.errorCode])).toEqual([
      ['sent', ''],
      ['failed', 'unreachable'],
    ]);
  });

  it('turns a bad token into a permanent carrier_rejected', async () => {
    const sim = await simulator();
    const err = await sendError(createMmsCarrier(config(sim.port, { token: 'wrong' }), quietLog).send(job('+64211234561')));
    expect(err).toMatchObject({ code: 'carrier_rejected', retryable: false });
    expect(err.message).toMatch(/401/);
  });

  it("turns an invalid request into carrier_rejected with the provider's message", async () => {
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

  describe('a send that times out after the provider took it', () => {
    const stalling = () =>
      kit.simulator((webhookUrl) => createMmsSimulator({ token: TOKEN, webhookSecret: SECRET, webhookUrl, deliverDelayMs: 20, lateAnswerMs: 5_000 }));

    it('asks the provider by our id and takes its message as the outcome, so the handset gets one MMS', async () => {
      const sim = await stalling();
      const carrier = createMmsCarrier(config(sim.port, { requestTimeoutMs: 1500 }), quietLog);
      const sent = job('+64211234567', undefined, 'Kia ora, e hoa mā — tēnā koe 👋🏽');

      const { carrierIds } = await carrier.send(sent);

      expect(sim.received).toHaveLength(1);
      expect(carrierIds).toEqual([sim.received[0]!.id]);
      expect(sim.received[0]!.client_ref).toBe(sent.id);
    });

    it('does not send again while the provider cannot be asked, and sends once it says it has nothing', async () => {
      const sim = await stalling();
      const carrier = createMmsCarrier(config(sim.port, { requestTimeoutMs: 1500 }), quietLog);
      const sent = job('+64211234567');
      // The provider took it, then went away before answering or being asked.
      const first = carrier.send(sent);
      await eventually(() => (sim.received.length === 1 ? true : undefined), 5000, 10);
      await sim.stop();
      expect(await sendError(first)).toBeInstanceOf(UnansweredRequestError);
      expect((await sendError(carrier.send(sent))).retryable).toBe(true);

      // Back, and knowing nothing of it (a provider that lost it): now it is sent.
      const again = await kit.simulator((webhookUrl) =>
        createMmsSimulator({ port: sim.port, token: TOKEN, webhookSecret: SECRET, webhookUrl, deliverDelayMs: 20 }),
      );
      await carrier.send({ ...sent, destination: '+64211234561' });
      expect(again.received.map((m) => m.client_ref)).toEqual([sent.id]);
    });
  });

  it('asks before sending a job handed out again (its worker died mid-send), and sends it only if the provider has none', async () => {
    const sim = await simulator();
    const carrier = createMmsCarrier(config(sim.port), quietLog);
    const sentBefore = job('+64211234561');
    const { carrierIds } = await carrier.send(sentBefore);
    const neverSent = job('+64211234562');

    // A new worker (no memory of the first send) gets both again from the bus.
    const restarted = createMmsCarrier(config(sim.port), quietLog);
    expect(await restarted.send(sentBefore, undefined, { redelivered: true })).toEqual({ carrierIds });
    await restarted.send(neverSent, undefined, { redelivered: true });

    expect(sim.received.map((m) => m.client_ref)).toEqual([sentBefore.id, neverSent.id]);
  });

  it('replays the documented send request and lookup answer of the MMS contract', async () => {
    const sim = await simulator();
    // The request of mms-carrier.ts's contract, written out as a provider's API reference shows it.
    const request = {
      from: '+15550000000',
      to: '+64211234561',
      subject: 'Tō tīkiti 🎫',
      text: 'Kia ora — 见附件',
      media: [{ url: 'https://cdn.example.com/a.png', content_type: 'image/png' }],
      client_ref: 'msg-0f8fad5b-d9cb-469f-a165-70867728950e',
    };
    const post = await fetch(`http://localhost:${sim.port}/v1/mms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
    expect(post.status).toBe(201);
    const { id } = (await post.json()) as { id: string };
    const lookup = await fetch(`http://localhost:${sim.port}/v1/mms?client_ref=${request.client_ref}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await lookup.json()).toEqual({ messages: [{ id, client_ref: request.client_ref, to: request.to }] });
    const none = await fetch(`http://localhost:${sim.port}/v1/mms?client_ref=msg-unknown`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await none.json()).toEqual({ messages: [] });
  });
});
