import { describe, expect, it } from 'vitest';
import { measureSms, planSms } from './sms-segments';
import { joinText } from './sms-segments-test-kit';

// The GSM 03.38 cases use ASCII and GSM's own extension characters on purpose: they are about that alphabet.
describe('SMS segmentation', () => {
  it('fits 160 GSM characters in one SMS without a UDH', () => {
    const plan = planSms('a'.repeat(160));
    expect(plan).toMatchObject({ encoding: 'gsm7', count: 1, dataCoding: 0x00, esmClass: 0x00, units: 160 });
    expect(plan.segments[0]!.length).toBe(160);
  });

  it('splits 161 GSM characters into two concatenated parts of 153 and 8', () => {
    const plan = planSms('a'.repeat(161), { reference: 0x2a });
    expect(plan).toMatchObject({ encoding: 'gsm7', count: 2, esmClass: 0x40, reference: 0x2a });
    expect(plan.segments.map((s) => s.length)).toEqual([6 + 153, 6 + 8]);
    expect(plan.segments[0]!.subarray(0, 6).toString('hex')).toBe('0500032a0201');
    expect(plan.segments[1]!.subarray(0, 6).toString('hex')).toBe('0500032a0202');
  });

  it('counts extension characters as two septets when deciding on one SMS', () => {
    expect(planSms('€'.repeat(80)).count).toBe(1);
    expect(planSms('€'.repeat(80) + 'a').count).toBe(2);
  });

  it('never splits an escape sequence across parts', () => {
    const text = 'a'.repeat(152) + '€' + 'b'.repeat(10);
    const plan = planSms(text);
    expect(plan.count).toBe(2);
    expect(plan.segments[0]!.length).toBe(6 + 152);
    expect(plan.segments[1]!.subarray(6).toString('hex')).toBe('1b65' + '62'.repeat(10));
    expect(joinText(plan)).toBe(text);
  });

  it('encodes a text with an emoji as UCS-2 (UTF-16BE, data_coding 0x08)', () => {
    const plan = planSms('Hi 😀');
    expect(plan).toMatchObject({ encoding: 'ucs2', count: 1, dataCoding: 0x08, units: 5 });
    expect(plan.segments[0]!.toString('hex')).toBe('00480069' + '0020' + 'd83dde00');
  });

  it('sends te reo Māori with macrons as UCS-2, 28 characters in one part, three times that in two', () => {
    const kiaOra = 'Kia ora, e hoa mā — tēnā koe';
    expect(planSms(kiaOra)).toMatchObject({ encoding: 'ucs2', count: 1, dataCoding: 0x08, units: 28 });
    const plan = planSms(kiaOra.repeat(3));
    expect(plan).toMatchObject({ encoding: 'ucs2', count: 2, units: 84 });
    expect(plan.segments.map((s) => s.length)).toEqual([6 + 67 * 2, 6 + 17 * 2]);
    expect(joinText(plan)).toBe(kiaOra.repeat(3));
  });

  it('counts an emoji with a skin-tone modifier as four UCS-2 units, and splits a long run of them only between surrogate pairs', () => {
    expect(planSms('👋🏽')).toMatchObject({ encoding: 'ucs2', count: 1, units: 4 });
    expect(planSms('ā' + '👋🏽'.repeat(17))).toMatchObject({ count: 1, units: 69 });
    const text = 'ā' + '👋🏽'.repeat(18);
    const plan = planSms(text);
    expect(plan).toMatchObject({ count: 2, units: 73 });
    for (const s of plan.segments) {
      const body = s.subarray(6);
      const last = body.readUInt16BE(body.length - 2);
      expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
    }
    expect(joinText(plan)).toBe(text);
  });

  it('fits 70 UCS-2 units in one SMS, emoji counting two, and splits 71 into parts of 67', () => {
    expect(planSms('😀'.repeat(35)).count).toBe(1);
    expect(planSms('д'.repeat(70)).count).toBe(1);
    const plan = planSms('д'.repeat(71));
    expect(plan.count).toBe(2);
    expect(plan.segments.map((s) => s.length)).toEqual([6 + 67 * 2, 6 + 4 * 2]);
  });

  it('never splits a surrogate pair across parts', () => {
    const text = 'дд' + '😀'.repeat(40);
    const plan = planSms(text);
    expect(plan.count).toBe(2);
    expect(plan.segments[0]!.length).toBe(6 + 66 * 2); // 'дд' + 32 emoji; a 33rd would need units 67 and 68
    for (const s of plan.segments) {
      const body = s.subarray(6);
      const last = body.readUInt16BE(body.length - 2);
      expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
    }
    expect(joinText(plan)).toBe(text);
  });

  it('round-trips long mixed texts through plan and decode, and measures what it plans', () => {
    const texts = [
      '',
      'short',
      'x'.repeat(1000),
      '{curly} [square] ~tilde~ '.repeat(30),
      'Ünïcödé ☃ '.repeat(40),
      '🇳🇿 kia ora '.repeat(25),
      'Kia ora, e hoa mā — tēnā koe! Привет, 你好世界 👋🏽🎉 '.repeat(20),
    ];
    for (const text of texts) {
      const plan = planSms(text);
      expect(joinText(plan)).toBe(text);
      expect(measureSms(text)).toEqual({ encoding: plan.encoding, units: plan.units, count: plan.count });
      expect(new Set(plan.segments.map((s) => (plan.count > 1 ? s[5] : 1)))).toEqual(new Set(Array.from({ length: plan.count }, (_, i) => i + 1)));
    }
  });

  it('refuses a text that needs more than 255 parts', () => {
    expect(() => planSms('a'.repeat(153 * 255 + 1))).toThrow(/255/);
    expect(measureSms('a'.repeat(153 * 255 + 1)).count).toBe(256);
  });
});

// Text exported from macOS or a CRM often comes decomposed (NFD): a letter, then its accent as a combining mark.
describe('SMS segmentation of decomposed text', () => {
  const nfd = (s: string): string => s.normalize('NFD');

  it('sends a decomposed é as the GSM character it composes to, not as UCS-2', () => {
    const text = 'Cafe\u0301 Rene\u0301e';
    const plan = planSms(text);
    expect(plan).toMatchObject({ encoding: 'gsm7', count: 1, dataCoding: 0x00, units: 10 });
    expect(joinText(plan)).toBe('Caf\u00e9 Ren\u00e9e');
    expect(measureSms(text)).toEqual({ encoding: 'gsm7', units: 10, count: 1 });
  });

  it('keeps a 157-character GSM message with one decomposed é in one SMS, not three UCS-2 parts', () => {
    const text = 'x'.repeat(151) + ' Rene\u0301e';
    expect(text.normalize('NFC')).toHaveLength(157);
    expect(planSms(text)).toMatchObject({ encoding: 'gsm7', count: 1, units: 157 });
    expect(measureSms(text).count).toBe(1);
  });

  it('sends a decomposed ñ, Ä and Å as GSM, byte for byte as their precomposed forms', () => {
    const composed = 'España, Äiti, Åse';
    expect(nfd(composed)).not.toBe(composed);
    const plan = planSms(nfd(composed));
    expect(plan.encoding).toBe('gsm7');
    expect(plan.segments).toEqual(planSms(composed).segments);
  });

  it('sends te reo Māori with decomposed macrons as UCS-2 in the code units of the precomposed text', () => {
    const kiaOra = 'Kia ora, e hoa mā — tēnā koe';
    const decomposed = 'Kia ora, e hoa ma\u0304 — te\u0304na\u0304 koe';
    expect(decomposed).toBe(nfd(kiaOra));
    expect(planSms(decomposed)).toMatchObject({ encoding: 'ucs2', count: 1, dataCoding: 0x08, units: 28 });
    expect(planSms(decomposed).segments).toEqual(planSms(kiaOra).segments);
    // Decomposed, three times over is 93 units, which would be two parts either way; 24 times, 744 against 672: 12 parts, not 11.
    expect(measureSms(decomposed.repeat(24))).toEqual({ encoding: 'ucs2', units: 672, count: 11 });
    expect(joinText(planSms(decomposed.repeat(24), { reference: 1 }))).toBe(kiaOra.repeat(24));
  });

  it('keeps a combining mark that composes with nothing, and sends that text as UCS-2', () => {
    const text = 'x\u0301 and q\u0304';
    const plan = planSms(text);
    expect(plan).toMatchObject({ encoding: 'ucs2', units: 9 });
    expect(joinText(plan)).toBe(text);
  });

  it('composes the Ångström and Ohm signs to Å and Ω, which GSM has', () => {
    expect(planSms('5 \u212b, 3 \u2126')).toMatchObject({ encoding: 'gsm7', units: 8 });
  });
});

describe('a text whose composed form is longer than as written', () => {
  it('goes as written when composing would make it more parts (Devanagari nukta letters decompose under NFC)', () => {
    const text = `\u095E${'क'.repeat(69)}`;
    expect(text.normalize('NFC').length).toBe(71);
    expect(measureSms(text)).toMatchObject({ encoding: 'ucs2', units: 70, count: 1 });
    expect(planSms(text).segments).toHaveLength(1);
  });
});
