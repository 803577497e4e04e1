import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GSM7_BASIC, isGsm7 } from './gsm7';
import { measureSms, planSms, planSmsAsWritten } from './sms-segments';
import { readParts } from './sms-segments-test-kit';

/**
 * Text as people write it: GSM letters, the escape table, te reo Māori macrons, Cyrillic, CJK, emoji with modifiers,
 * and letters that decompose (é, ñ, Ä, Å; Ångström and Ohm signs) or combining marks alone.
 */
const WORLD = [
  'ā',
  'ē',
  'ī',
  'ō',
  'ū',
  'Ā',
  'д',
  'Ж',
  '你',
  '好',
  '😀',
  '👋🏽',
  '🇳🇿',
  '€',
  '[',
  ']',
  '{',
  '}',
  '~',
  '^',
  '\\',
  '|',
  ' ',
  'é',
  'ñ',
  'Ä',
  'Å',
  'Ü',
  'ç',
  'Ç',
  'ự',
  '\u212b',
  '\u2126',
  '\u0301',
  '\u0304',
  '\u0323',
];
const gsmChar = fc.constantFrom(...[...GSM7_BASIC].filter((c) => c !== '\x1b'));
const worldText = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: gsmChar },
      { weight: 2, arbitrary: fc.constantFrom(...WORLD) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 3 }) },
    ),
    { maxLength: 700 },
  )
  .map((parts) => parts.join(''));

describe('SMS segmentation (property)', () => {
  it('joins its segments back into exactly the text in NFC, in the encoding and count that measureSms gives', () => {
    fc.assert(
      fc.property(worldText, (text) => {
        const plan = planSms(text);
        const measure = measureSms(text);
        expect(plan.count).toBe(measure.count);
        expect(plan.encoding).toBe(isGsm7(text.normalize('NFC')) ? 'gsm7' : 'ucs2');
        const parts = readParts(plan);
        expect(parts.map((p) => p.text).join('')).toBe(text.normalize('NFC'));
        expect(plan.segments.length).toBe(plan.count);
        if (plan.count > 1) expect(parts.map((p) => p.concat)).toEqual(parts.map((_, i) => ({ ref: plan.reference, total: plan.count, seq: i + 1 })));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps every segment within 140 octets and never ends one inside a surrogate pair or an escape', () => {
    fc.assert(
      fc.property(worldText, (text) => {
        const plan = planSms(text);
        for (const s of plan.segments) {
          expect(s.length).toBeLessThanOrEqual(plan.count > 1 ? 6 + (plan.encoding === 'gsm7' ? 153 : 134) : 160);
          const body = s.subarray(plan.count > 1 ? 6 : 0);
          if (plan.encoding === 'ucs2' && body.length >= 2) {
            const last = body.readUInt16BE(body.length - 2);
            expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
          }
          if (plan.encoding === 'gsm7' && body.length >= 1) expect(body[body.length - 1]).not.toBe(0x1b);
        }
      }),
      { numRuns: 300 },
    );
  });

  const anyText = fc.oneof(worldText, fc.string({ unit: 'binary', maxLength: 400 }), fc.string({ unit: 'grapheme', maxLength: 200 }));

  it('plans the same segments for a text decomposed (NFD) as composed (NFC), and measures them the same', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const nfc = planSms(text.normalize('NFC'), { reference: 7 });
        const nfd = planSms(text.normalize('NFD'), { reference: 7 });
        expect(nfd).toEqual(nfc);
        expect(planSms(text, { reference: 7 })).toEqual(nfc);
        expect(measureSms(text.normalize('NFD'))).toEqual(measureSms(text.normalize('NFC')));
      }),
      { numRuns: 500 },
    );
  });

  it('plans a reply’s parts exactly as written when asked to, decomposed marks and all', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(
          readParts(planSmsAsWritten(text))
            .map((p) => p.text)
            .join(''),
        ).toBe(text);
      }),
      { numRuns: 300 },
    );
  });
});

// planSms skips normalize() for these texts; the claim is the standard's (their NFC_Quick_Check is Yes and their
// combining class 0), checked here against the engine's own normalize().
describe('text normalize() cannot change (property)', () => {
  const gsmAbove = [...GSM7_BASIC].filter((c) => c.charCodeAt(0) >= 0x300);
  const stable = [...Array.from({ length: 0x300 }, (_, c) => String.fromCharCode(c)), ...gsmAbove, '€'];

  it('leaves every character below U+0300 and every GSM character as it is, alone and beside any other of them', () => {
    expect(gsmAbove.length).toBeGreaterThan(0);
    for (const a of stable) {
      expect(a.normalize('NFC')).toBe(a);
      for (const b of stable) if ((a + b).normalize('NFC') !== a + b) expect.fail(`NFC changes ${JSON.stringify(a + b)}`);
    }
  });

  it('leaves any text of such characters as it is', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...stable), { maxLength: 300 }), (chars) => {
        const text = chars.join('');
        expect(text.normalize('NFC')).toBe(text);
      }),
      { numRuns: 500 },
    );
  });
});
