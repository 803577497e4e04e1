import { describe, expect, it } from 'vitest';
import { whatsAppWebhook } from './whatsapp-webhook';
import { whatsAppInbound } from './whatsapp-inbound';

const metadata = { display_phone_number: '15550783881', phone_number_id: '106540352242922' };
const webhook = (...messages: Record<string, unknown>[]) => ({
  object: 'whatsapp_business_account',
  entry: [{ id: '102290129340398', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata, messages } }] }],
});
const from = { from: '64211234561', timestamp: '1749416383' };

describe('WhatsApp handsets’ messages in the webhook', () => {
  it('reads a text as a reply from the handset to the business number, under its wamid', () => {
    const body = webhook({ ...from, id: 'wamid.A', type: 'text', text: { body: 'Kia ora, e hoa mā — tēnā koe 👋🏽' } });
    expect(whatsAppInbound(body)).toEqual([
      {
        source: '+64211234561',
        destination: '+15550783881',
        text: 'Kia ora, e hoa mā — tēnā koe 👋🏽',
        at: 1_749_416_383_000,
        carrierRef: 'wamid.A',
        businessId: '106540352242922',
        quotedRef: '',
      },
    ]);
    expect(whatsAppWebhook.inbound?.(body)).toEqual(whatsAppInbound(body));
    // The same body carries no delivery reports.
    expect(whatsAppWebhook.parse(body)).toEqual([]);
  });

  it('reads the message a reply quotes (swiped to reply, or a button of it tapped) from its context', () => {
    const quoted = { from: '15550783881', id: 'wamid.HBgLMTY0Njc4OTEyMzQVAgARGBI=' };
    const [swiped, tapped, junk] = whatsAppInbound(
      webhook(
        { ...from, id: 'wamid.Q1', type: 'text', text: { body: 'Āe, mō tēnā 👍🏽' }, context: quoted },
        { ...from, id: 'wamid.Q2', type: 'button', button: { text: 'Kāo', payload: 'no' }, context: quoted },
        { ...from, id: 'wamid.Q3', type: 'text', text: { body: '好的' }, context: { id: 42 } },
      ),
    );
    expect([swiped?.quotedRef, tapped?.quotedRef, junk?.quotedRef]).toEqual([quoted.id, quoted.id, '']);
  });

  it('reads button and list replies as their titles, and a template button as its text', () => {
    const texts = whatsAppInbound(
      webhook(
        { ...from, id: 'wamid.B', type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'yes', title: 'Āe 你好' } } },
        { ...from, id: 'wamid.C', type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: 'row-2', title: 'Привет', description: 'x' } } },
        { ...from, id: 'wamid.D', type: 'button', button: { text: 'STOP', payload: 'stop-promotions' } },
      ),
    ).map((m) => m.text);
    expect(texts).toEqual(['Āe 你好', 'Привет', 'STOP']);
  });

  it('reads media as a reference to fetch, with its caption or file name, and a location as its coordinates', () => {
    const texts = whatsAppInbound(
      webhook(
        { ...from, id: 'wamid.E', type: 'image', image: { id: '1479537139650973', mime_type: 'image/jpeg', sha256: 'x', caption: 'Tirohia 📷' } },
        { ...from, id: 'wamid.F', type: 'document', document: { id: '99', mime_type: 'application/pdf', filename: 'pūrongo.pdf' } },
        { ...from, id: 'wamid.G', type: 'audio', audio: { id: '77', mime_type: 'audio/ogg; codecs=opus', voice: true } },
        { ...from, id: 'wamid.H', type: 'location', location: { latitude: -36.8485, longitude: 174.7633, name: 'Tāmaki Makaurau' } },
      ),
    ).map((m) => m.text);
    expect(texts).toEqual([
      '[image 1479537139650973 image/jpeg] Tirohia 📷',
      '[document 99 application/pdf] pūrongo.pdf',
      '[audio 77 audio/ogg; codecs=opus]',
      '[location -36.8485,174.7633] Tāmaki Makaurau',
    ]);
  });

  it('skips reactions, unsupported and system messages, malformed senders and junk without throwing', () => {
    const body = webhook(
      { ...from, id: 'wamid.R', type: 'reaction', reaction: { message_id: 'wamid.X', emoji: '👍' } },
      { ...from, id: 'wamid.U', type: 'unsupported', errors: [{ code: 131051 }] },
      { from: 'not-a-number', id: 'wamid.N', type: 'text', text: { body: 'x' } },
      { ...from, type: 'text', text: { body: 'no id' } },
      { ...from, id: 'wamid.T', type: 'text', text: { body: '   ' } },
      { ...from, id: 'wamid.I', type: 'image', image: { caption: 'no media id' } },
    );
    expect(whatsAppInbound(body)).toEqual([]);
    const noMetadata = {
      object: 'whatsapp_business_account',
      entry: [{ changes: [{ field: 'messages', value: { messages: [{ ...from, id: 'w', type: 'text', text: { body: 'x' } }] } }] }],
    };
    expect(whatsAppInbound(noMetadata)).toEqual([]);
    for (const junk of [undefined, null, 1, 'x', [], {}, { object: 'page' }, { object: 'whatsapp_business_account', entry: 'x' }])
      expect(whatsAppInbound(junk)).toEqual([]);
  });

  it('uses the arrival time when the timestamp is unusable', () => {
    const before = Date.now();
    const [m] = whatsAppInbound(webhook({ from: '64211234561', timestamp: 'soon', id: 'wamid.Z', type: 'text', text: { body: 'hi' } }));
    expect(m!.at).toBeGreaterThanOrEqual(before);
  });
});
