import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { rcsWebhook } from './rcs-webhook';

const SECRET = 'client-token';
const sign = (bytes: Buffer) => createHmac('sha512', SECRET).update(bytes).digest('base64');
const envelope = (event: unknown) => ({
  message: { data: Buffer.from(JSON.stringify(event)).toString('base64'), messageId: 'ps-1', publishTime: '2025-01-01T12:00:05Z' },
  subscription: 'projects/rbm-agent/subscriptions/rbm-agent-subscription',
});

describe('RCS webhook parsing and verification', () => {
  it('maps RBM user events in a Pub/Sub envelope: DELIVERED to received, READ to read', () => {
    const event = {
      senderPhoneNumber: '+64211234561',
      eventType: 'DELIVERED',
      eventId: 'e1',
      messageId: 'msg-1',
      sendTime: '2025-01-01T12:00:00.123456789Z',
      agentId: 'agent',
    };
    expect(rcsWebhook.parse(envelope(event))).toEqual([{ carrierId: 'msg-1', status: 'received', at: Date.parse('2025-01-01T12:00:00.123Z'), errorCode: '' }]);
    expect(rcsWebhook.parse(envelope({ ...event, eventType: 'READ' }))[0]!.status).toBe('read');
  });

  it('takes the event inside agentEvent, and an unwrapped body, too', () => {
    const agentEvent = { eventType: 'READ', messageId: 'msg-2', sendTime: '2025-01-01T12:00:00Z' };
    expect(rcsWebhook.parse(envelope({ agentEvent, senderPhoneNumber: '+64211234561' }))).toEqual([
      { carrierId: 'msg-2', status: 'read', at: Date.parse('2025-01-01T12:00:00Z'), errorCode: '' },
    ]);
    expect(rcsWebhook.parse({ agentEvent, senderPhoneNumber: '+64211234561' })[0]).toMatchObject({ carrierId: 'msg-2', status: 'read' });
  });

  it('reports a message RBM revoked at the end of its time to live as expired', () => {
    expect(rcsWebhook.parse(envelope({ eventType: 'TTL_EXPIRATION_REVOKED', messageId: 'msg-3', phoneNumber: '+64211234561' }))).toEqual([
      { carrierId: 'msg-3', status: 'expired', at: Date.parse('2025-01-01T12:00:05Z'), errorCode: '' },
    ]);
  });

  it('skips user messages, typing, unknown events and junk without throwing', () => {
    expect(rcsWebhook.parse(envelope({ senderPhoneNumber: '+64211234561', text: 'Kia ora, e hoa mā — Привет 👋🏽', messageId: 'mo-1' }))).toEqual([]);
    expect(rcsWebhook.parse(envelope({ eventType: 'IS_TYPING', messageId: 'x' }))).toEqual([]);
    expect(rcsWebhook.parse({ message: { data: 'bm90IGpzb24=' } })).toEqual([]);
    for (const junk of [undefined, null, 7, 'x', [], {}, { message: 'x' }, { eventType: 'DELIVERED' }]) expect(rcsWebhook.parse(junk)).toEqual([]);
  });

  it("accepts RBM's signature over the decoded event and one over the raw body", () => {
    const body = envelope({ eventType: 'DELIVERED', messageId: 'msg-4' });
    const raw = Buffer.from(JSON.stringify(body));
    expect(rcsWebhook.verify(raw, { 'x-goog-signature': sign(Buffer.from(body.message.data, 'base64')) }, SECRET)).toBe(true);
    expect(rcsWebhook.verify(raw, { 'x-goog-signature': sign(raw) }, SECRET)).toBe(true);
    const unwrapped = Buffer.from(JSON.stringify({ agentEvent: { eventType: 'READ', messageId: 'msg-4' } }));
    expect(rcsWebhook.verify(unwrapped, { 'X-Goog-Signature': sign(unwrapped) }, SECRET)).toBe(true);
    expect(rcsWebhook.verify(unwrapped, { 'x-goog-signature': sign(raw) }, SECRET)).toBe(false);
  });

  it('reads only the signed data of an envelope, not events added beside it', () => {
    const body = { ...envelope({ eventType: 'DELIVERED', messageId: 'msg-5' }), agentEvent: { eventType: 'READ', messageId: 'msg-6' } };
    const raw = Buffer.from(JSON.stringify(body));
    expect(rcsWebhook.verify(raw, { 'x-goog-signature': sign(Buffer.from(body.message.data, 'base64')) }, SECRET)).toBe(true);
    expect(rcsWebhook.parse(body).map((r) => r.carrierId)).toEqual(['msg-5']);
  });
});

describe("RBM's webhook verification handshake", () => {
  it('answers the secret when the client token is ours, refuses another token as such, and takes nothing else for one', () => {
    expect(rcsWebhook.handshake?.({ clientToken: SECRET, secret: '1234567890' }, SECRET)).toEqual({ answer: '1234567890' });
    expect(rcsWebhook.handshake?.({ clientToken: 'someone-else', secret: '1234567890' }, SECRET)).toEqual({
      refused: 'RBM client token does not match the configured one (HERMOD_RCS_WEBHOOK_SECRET)',
    });
    expect(rcsWebhook.handshake?.({ clientToken: '', secret: 'x' }, '')).toEqual({
      refused: 'no RBM client token is configured (HERMOD_RCS_WEBHOOK_SECRET is empty)',
    });
    expect(rcsWebhook.handshake?.({ clientToken: SECRET }, SECRET)).toBeUndefined();
    expect(rcsWebhook.handshake?.(envelope({ eventType: 'READ', messageId: 'm' }), SECRET)).toBeUndefined();
  });
});
