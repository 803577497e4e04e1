import { afterEach, describe, expect, it } from 'vitest';
import { whatsAppWebhook } from '../../../lib/carrier-webhooks/whatsapp-webhook';
import { imJob, quietLog, sendError } from '../http/http-carrier-test-kit';
import { createWhatsAppCarrier } from '../whatsapp/whatsapp-carrier';
import * as wa from './whatsapp-documented-examples';
import { startReplayServer } from './replay-server';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const TOKEN = 'EAAJB-system-user-token';

/** The WhatsApp carrier against a server that answers with Meta's documented answers. */
async function replay(answer: { status: number; body: unknown }) {
  const server = await startReplayServer({ '*': answer });
  closers.push(server.close);
  const carrier = createWhatsAppCarrier(
    { baseUrl: `http://localhost:${server.port}`, token: TOKEN, sender: '106540352242922', webhookSecret: 'x', apiVersion: 'v21.0' },
    quietLog,
  );
  return { server, carrier };
}

describe('WhatsApp Cloud API as Meta documents it: the requests hermod makes', () => {
  it('sends the documented text request and takes the wamid from the documented answer', async () => {
    const { server, carrier } = await replay(wa.SEND_TEXT.answer);
    const sent = await carrier.send(imJob('wab', '+16505551234', { type: 'text' }, 'Hello, world!'));
    expect(sent).toEqual({ carrierIds: [wa.SEND_TEXT.answer.body.messages[0]!.id] });
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v21.0/106540352242922/messages' });
    expect(request!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(JSON.parse(request!.rawBody)).toEqual(wa.SEND_TEXT.body);
  });

  it('sends an image by link as documented', async () => {
    const { server, carrier } = await replay(wa.SEND_TEXT.answer);
    const url = wa.SEND_IMAGE.body.image.link;
    await carrier.send(imJob('wab', '+16505551234', { type: 'media', media: { mimeType: 'image/jpeg', url } }, url));
    expect(JSON.parse(server.requests[0]!.rawBody)).toEqual(wa.SEND_IMAGE.body);
  });

  it('gives up on a refused token (190) and retries a rate limit (130429), as the documented errors say', async () => {
    const bad = await sendError((await replay(wa.ERROR_BAD_TOKEN)).carrier.send(imJob('wab', '+16505551234', { type: 'text' }, 'Hello, world!')));
    expect(bad).toMatchObject({ code: 'carrier_rejected', retryable: false });
    expect(bad.message).toMatch(/code 190/);
    const limited = await sendError((await replay(wa.ERROR_THROUGHPUT)).carrier.send(imJob('wab', '+16505551234', { type: 'text' }, 'Hello, world!')));
    expect(limited).toMatchObject({ code: 'carrier_transient', retryable: true });
  });
});

describe('WhatsApp Cloud API as Meta documents it: the webhooks hermod takes', () => {
  const wamid = 'wamid.HBgLMTY1MDUwNzY1MjAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA';

  it('reads the documented sent, delivered, read and failed statuses', () => {
    expect([wa.STATUS_SENT, wa.STATUS_DELIVERED, wa.STATUS_READ, wa.STATUS_FAILED].flatMap((b) => whatsAppWebhook.parse(b))).toEqual([
      { carrierId: wamid, status: 'sent', at: 1_750_263_773_000, errorCode: '' },
      { carrierId: wamid, status: 'received', at: 1_750_263_774_000, errorCode: '' },
      { carrierId: wamid, status: 'read', at: 1_750_263_775_000, errorCode: '' },
      // Meta's words beside the code, its details left out where they only repeat the title ('Message Undeliverable.').
      { carrierId: wamid, status: 'failed', at: 1_750_263_776_000, errorCode: '131026', detail: '131026: Message undeliverable' },
    ]);
    for (const b of [wa.STATUS_SENT, wa.STATUS_FAILED]) expect(whatsAppWebhook.inbound?.(b)).toEqual([]);
  });

  it('reads the documented text, button reply (with the message it quotes) and image as replies to the business number, and skips the reaction', () => {
    const replies = [wa.MESSAGE_TEXT, wa.MESSAGE_BUTTON_REPLY, wa.MESSAGE_IMAGE, wa.MESSAGE_REACTION].flatMap((b) => whatsAppWebhook.inbound?.(b) ?? []);
    expect(replies).toEqual([
      {
        source: '+16505551234',
        destination: '+15550783881',
        text: 'Does it come in another color?',
        at: 1_749_416_383_000,
        carrierRef: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=',
        businessId: '106540352242922',
        quotedRef: '',
      },
      {
        source: '+16505551234',
        destination: '+15550783881',
        text: 'Change',
        at: 1_749_416_400_000,
        carrierRef: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQjJGNDk3MTVEMDNBNkQ2NDIA',
        businessId: '106540352242922',
        quotedRef: 'wamid.HBgLMTY1MDUwNzY1MjAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA',
      },
      {
        source: '+16505551234',
        destination: '+15550783881',
        text: '[image 1003383421387256 image/jpeg] This is a caption',
        at: 1_749_416_500_000,
        carrierRef: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzRjNFNkM1NjI1MUQzQzYyQzAA',
        businessId: '106540352242922',
        quotedRef: '',
      },
    ]);
    for (const b of [wa.MESSAGE_TEXT, wa.MESSAGE_IMAGE]) expect(whatsAppWebhook.parse(b)).toEqual([]);
  });
});
