import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { whatsAppInbound } from './whatsapp-inbound';

/** Any JSON, with the world's text among its strings. */
const text = fc.oneof(fc.string({ unit: 'grapheme' }), fc.constantFrom('Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽', 'STOP', ''));
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
const digits = fc.stringMatching(/^[1-9]\d{6,13}$/);
const textMessage = fc.record({
  from: digits,
  id: fc.stringMatching(/^wamid\.[A-Za-z0-9=]{1,30}$/),
  /** The message it replies to (swiped), or none. */
  quoted: fc.option(fc.stringMatching(/^wamid\.[A-Za-z0-9=]{1,30}$/), { nil: undefined }),
  timestamp: fc.integer({ min: 1, max: 4e9 }).map(String),
  body: text,
});

describe('WhatsApp inbound parsing, over any input', () => {
  it('never throws, and everything it returns is a well-formed reply', () => {
    fc.assert(
      fc.property(json, fc.array(json, { maxLength: 3 }), (junk, messages) => {
        for (const body of [
          junk,
          {
            object: 'whatsapp_business_account',
            entry: [{ changes: [{ field: 'messages', value: { metadata: { display_phone_number: '15550783881' }, messages } }] }],
          },
        ]) {
          for (const m of whatsAppInbound(body)) {
            expect(m.source).toMatch(/^\+[1-9]\d{5,14}$/);
            expect(m.destination).toMatch(/^\+[1-9]\d{5,14}$/);
            expect(m.carrierRef).not.toBe('');
            expect(Number.isFinite(m.at)).toBe(true);
          }
        }
      }),
    );
  });

  it('keeps every text message, its text exactly, its sender with a plus, its id and the id it quotes, in order', () => {
    fc.assert(
      fc.property(fc.array(textMessage, { maxLength: 5 }), (list) => {
        const messages = list.map((m) => ({
          from: m.from,
          id: m.id,
          timestamp: m.timestamp,
          type: 'text',
          text: { body: m.body },
          ...(m.quoted ? { context: { from: '15550783881', id: m.quoted } } : {}),
        }));
        const body = {
          object: 'whatsapp_business_account',
          entry: [{ changes: [{ field: 'messages', value: { metadata: { display_phone_number: '15550783881' }, messages } }] }],
        };
        const expected = list
          .filter((m) => m.body.trim() !== '')
          .map((m) => ({
            source: `+${m.from}`,
            destination: '+15550783881',
            text: m.body,
            at: Number(m.timestamp) * 1000,
            carrierRef: m.id,
            businessId: '',
            quotedRef: m.quoted ?? '',
          }));
        expect(whatsAppInbound(body)).toEqual(expected);
      }),
    );
  });

  it('gives a text holding half of a surrogate pair (JSON "\\ud83d" alone) with U+FFFD in its place, as WHATWG makes a USVString, and whole characters as they came', () => {
    const unit = fc.oneof(
      fc.constantFrom('\ud83d', '\udc4b', '👋🏽', 'ā', 'ē', 'ī', 'ō', 'ū', ' ', 'k'),
      fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
    );
    fc.assert(
      fc.property(fc.array(unit, { minLength: 1, maxLength: 12 }), (units) => {
        const sent = `Kia ora ${units.join('')}`;
        // What a well-formed JSON.stringify writes and WhatsApp posts: a lone half as a \u escape.
        const body = JSON.parse(
          JSON.stringify({
            object: 'whatsapp_business_account',
            entry: [
              {
                changes: [
                  {
                    field: 'messages',
                    value: {
                      metadata: { display_phone_number: '15550783881' },
                      messages: [{ from: '6421000001', id: 'wamid.X', type: 'text', text: { body: sent } }],
                    },
                  },
                ],
              },
            ],
          }),
        );
        const [m] = whatsAppInbound(body);
        expect(m!.text).toBe(Array.from(sent, (c) => (/^\p{Cs}$/u.test(c) ? '\ufffd' : c)).join(''));
        expect(m!.text).not.toMatch(/\p{Cs}/u);
      }),
    );
    const [m] = whatsAppInbound({
      object: 'whatsapp_business_account',
      entry: [
        {
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { display_phone_number: '15550783881' },
                messages: [{ from: '6421000001', id: 'wamid.Y', type: 'text', text: { body: 'Tēnā koe \ud83d — 👋🏽 ka kite anō' } }],
              },
            },
          ],
        },
      ],
    });
    expect(m!.text).toBe('Tēnā koe \ufffd — 👋🏽 ka kite anō');
  });
});
