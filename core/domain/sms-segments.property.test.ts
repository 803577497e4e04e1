import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GSM7_BASIC, isGsm7 } from './gsm7';
import { measureSms, planSms } from './sms-segments';
import { readParts } from './sms-segments-test-kit';

/** Text as people write it: GSM letters, the escape table, te reo Māori macrons, Cyrillic, CJK, emoji with modifiers. */
const WORLD = ['ā', 'ē', 'ī', 'ō', 'ū', 'Ā', 'д', 'Ж', '你', '好', '😀', '👋🏽', '🇳🇿', '€', '[', ']', '{', '}', '~', '^', '\\', '|', ' '];
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
  it('joins its segments back into exactly the text, in the encoding and count that measureSms gives', () => {
    fc.assert(
      fc.property(worldText, (text) => {
        const plan = planSms(text);
        const measure = measureSms(text);
        expect(plan.count).toBe(measure.count);
        expect(plan.encoding).toBe(isGsm7(text) ? 'gsm7' : 'ucs2');
        const parts = readParts(plan);
        expect(parts.map((p) => p.text).join('')).toBe(text);
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
});
