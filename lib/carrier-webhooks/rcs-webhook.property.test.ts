import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rcsWebhook } from './rcs-webhook';

const text = fc.oneof(fc.string({ unit: 'grapheme' }), fc.constantFrom('Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽', 'DELIVERED', 'READ', ''));
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(text, tie('value'), { maxKeys: 3 }),
  ),
})).value;
const envelope = (event: unknown) => ({ message: { data: Buffer.from(JSON.stringify(event) ?? '').toString('base64'), publishTime: '2025-01-01T12:00:05Z' } });

describe('RBM webhook parsing, over any input', () => {
  it('never throws, bare or in a Pub/Sub envelope, and reports only known statuses with a message id and a time', () => {
    fc.assert(
      fc.property(json, (body) => {
        for (const candidate of [body, envelope(body)]) {
          for (const r of rcsWebhook.parse(candidate)) {
            expect(['received', 'read', 'expired']).toContain(r.status);
            expect(r.carrierId).not.toBe('');
            expect(Number.isFinite(r.at)).toBe(true);
          }
          expect(() => rcsWebhook.handshake?.(candidate, 'client-token')).not.toThrow();
        }
      }),
    );
  });

  it('reads any DELIVERED or READ event back under its message id', () => {
    fc.assert(
      fc.property(fc.constantFrom('DELIVERED', 'READ'), fc.string({ minLength: 1 }), text, (eventType, messageId, phone) => {
        const [report] = rcsWebhook.parse(envelope({ eventType, messageId, senderPhoneNumber: phone }));
        expect(report).toMatchObject({ carrierId: messageId, status: eventType === 'READ' ? 'read' : 'received' });
      }),
    );
  });

  it('answers the handshake with exactly the secret it was sent, and only for the right client token', () => {
    fc.assert(
      fc.property(text, fc.string({ minLength: 1 }), text, (secret, token, other) => {
        expect(rcsWebhook.handshake?.({ clientToken: token, secret }, token)).toEqual({ answer: secret });
        if (other !== token) expect(rcsWebhook.handshake?.({ clientToken: other, secret }, token)).not.toHaveProperty('answer');
      }),
    );
  });
});
